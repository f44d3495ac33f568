package gitstate_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// envMidxRounds sets the rounds of TestUserRepackBesideStoreRepack (by
// default 1; -short skips it); GITSTATE_STRESS_BUSY=N adds N goroutines
// that keep the CPUs busy meanwhile.
const envMidxRounds = "GITSTATE_MIDX_ROUNDS"

// userRepacks are what a person runs by hand, or git maintenance on a
// schedule, that writes a multi-pack-index without git gc's lock, so
// nothing keeps it apart from the store's background geometric repack
// (which runs under gc.pid and maintenance.lock: backgroundScript).
var userRepacks = map[string][]string{
	"repack-d-midx":      {"repack", "-d", "-q", "--write-midx"},
	"incremental-repack": {"-c", "maintenance.incremental-repack.auto=0", "maintenance", "run", "--task=incremental-repack", "--quiet"},
}

// TestUserRepackBesideStoreRepack asks whether a person's `git repack -d
// --write-midx` (or git maintenance's incremental-repack task) racing with
// the store's background `git repack --geometric=2 -d -l --write-midx`
// can leave a multi-pack-index that names a deleted pack, or lose an
// object. Neither takes a lock the other respects. Writer processes make
// a pack per commit; beside them the store's repack runs in a loop, exactly
// as a writer starts it (gitstate.BackgroundScript, under git gc's lock),
// and so does the person's command. After each round, once everything has
// stopped: every pack the multi-pack-index names is there, `git
// multi-pack-index verify` and `git fsck --full --strict` are clean, and
// every acknowledged write is at the tip. Failures git reports while a
// pack it read went away (the two repacks refusing, not losing) are
// counted apart.
func TestUserRepackBesideStoreRepack(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("a stress test of git against git: run without -short (GITSTATE_MIDX_ROUNDS, GITSTATE_STRESS_BUSY)")
	}
	rounds := 1
	if n, err := strconv.Atoi(os.Getenv(envMidxRounds)); err == nil && n > 0 {
		rounds = n
	}
	if n, err := strconv.Atoi(os.Getenv("GITSTATE_STRESS_BUSY")); err == nil && n > 0 {
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		for i := 0; i < n; i++ {
			go func() {
				x := 0
				for ctx.Err() == nil {
					for j := 0; j < 1e6; j++ {
						x += j
					}
					runtime.Gosched()
				}
				_ = x
			}()
		}
	}
	for name, args := range userRepacks {
		t.Run(name, func(t *testing.T) { userRepackBesideStoreRepack(t, args, rounds) })
	}
}

func userRepackBesideStoreRepack(t *testing.T, args []string, rounds int) {
	const procs, writes = 3, 40
	dir := newStateRepo(t)
	common := filepath.Join(dir, ".git")
	// the store's repack writes a multi-pack-index where there is one
	gitstatetest.Git(t, dir, "multi-pack-index", "write")
	host, _ := os.Hostname()
	store := []string{"sh", "-c", gitstate.BackgroundScript, "sh", common, host, "gc", "0", strconv.Itoa(gitstate.HistoryBatch), "repack", "--geometric=2", "-d", "-l", "-q", "--write-midx"}
	acked := map[string]bool{}
	var userRuns, storeRuns, refused, throughStale atomic.Int64
	stale := 0
	var failures []string
	var mu sync.Mutex
	fail := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, s)
	}
	start := time.Now()
	for r := 0; r < rounds; r++ {
		ctx, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		loop := func(cmdline []string, runs *atomic.Int64) {
			defer wg.Done()
			for ctx.Err() == nil {
				cmd := exec.Command(cmdline[0], cmdline[1:]...)
				cmd.Dir = dir
				out, err := cmd.CombinedOutput()
				runs.Add(1)
				if err != nil || bytes.Contains(out, []byte("error")) || bytes.Contains(out, []byte("fatal")) {
					msg := fmt.Sprintf("round %d: %s: %v: %s", r, strings.Join(cmdline[min(len(cmdline), 4):], " "), err, out)
					if concurrentRepack(msg) || lockContention(msg) {
						refused.Add(1)
						continue
					}
					if strings.Contains(msg, "bad object") {
						// a repack reading through an index the race
						// left stale: the round's end tells whether
						// anything was lost, and repairs it
						throughStale.Add(1)
						continue
					}
					fail(msg)
				}
				time.Sleep(time.Millisecond)
			}
		}
		wg.Add(2)
		go loop(append([]string{"git"}, args...), &userRuns)
		go loop(store, &storeRuns)
		ws := make([]*writerProc, procs)
		for i := range ws {
			ws[i] = startWriter(t, dir, fmt.Sprintf("r%dp%d", r, i), writes)
		}
		for _, w := range ws {
			if err := w.wait(5 * time.Minute); err != nil {
				t.Errorf("round %d: writer %s: %v\n%s", r, w.name, err, w.stderr.String())
			}
			for _, p := range w.acked() {
				acked[p] = true
			}
		}
		stop()
		wg.Wait()
		if err := gitstatetest.WaitForLocks(common); err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
		if t.Failed() {
			break
		}
		// what the race left, with nothing running: a multi-pack-index
		// naming a pack the store's repack deleted makes git fail to
		// read what the index places there; with the index set aside,
		// git must read every object (nothing lost)
		if gone, named := midxPacksGone(t, common); len(gone) > 0 {
			stale++
			t.Logf("round %d: the multi-pack-index names %d of its %d packs that are gone", r, len(gone), named)
			if out, err := gitstatetest.GitErr(dir, "-c", "core.multiPackIndex=false", "fsck", "--full", "--strict", "--no-dangling"); err != nil {
				t.Errorf("round %d: objects lost: git fsck without the multi-pack-index: %v\n%s", r, err, out)
			}
		}
		// the next write repairs it (Store.maintain), as the next sync
		// would (Store.Sync)
		writeOne(t, dir, fmt.Sprintf("heal/r%d.json", r))
		if err := gitstatetest.WaitForLocks(common); err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
		if gone, _ := midxPacksGone(t, common); len(gone) > 0 {
			t.Errorf("round %d: after a write the multi-pack-index still names packs that are gone: %v", r, gone)
		}
		if out, err := gitstatetest.GitErr(dir, "multi-pack-index", "verify"); err != nil {
			t.Errorf("round %d: git multi-pack-index verify: %v\n%s", r, err, out)
		}
		if out, err := gitstatetest.GitErr(dir, "fsck", "--full", "--strict", "--no-dangling"); err != nil {
			t.Errorf("round %d: git fsck: %v\n%s", r, err, out)
		}
		recs := tipRecords(t, dir)
		for p := range acked {
			if _, ok := recs[p]; !ok {
				t.Errorf("round %d: acknowledged write %s missing at the tip", r, p)
			}
		}
		if t.Failed() {
			break
		}
	}
	for _, f := range failures {
		t.Errorf("%s", f)
	}
	if len(acked) != rounds*procs*writes {
		t.Errorf("%d writes acknowledged, want %d", len(acked), rounds*procs*writes)
	}
	t.Logf("git %s beside the store's repack: %d rounds, %d writes found, %d runs of it, %d of the store's repack, %d refused by git (a pack gone under a repack), %d failed reading through a stale multi-pack-index, %d rounds left a multi-pack-index naming a deleted pack (repaired by the next write), %s",
		strings.Join(args, " "), rounds, len(acked), userRuns.Load(), storeRuns.Load(), refused.Load(), throughStale.Load(), stale, time.Since(start).Round(time.Millisecond))
}

// midxPacksGone lists the packs the repository's multi-pack-index names
// (its PNAM chunk: git's gitformat-pack "multi-pack-index files") that are
// not in objects/pack, and how many it names. No multi-pack-index names
// none.
func midxPacksGone(t *testing.T, common string) (gone []string, named int) {
	t.Helper()
	packDir := filepath.Join(common, "objects", "pack")
	b, err := os.ReadFile(filepath.Join(packDir, "multi-pack-index"))
	if os.IsNotExist(err) {
		return nil, 0
	}
	if err != nil {
		t.Fatal(err)
	}
	names, err := gitstate.MidxPackNames(b)
	if err != nil {
		t.Fatalf("multi-pack-index: %v", err)
	}
	for _, n := range names {
		pack := strings.TrimSuffix(n, ".idx") + ".pack"
		if _, err := os.Stat(filepath.Join(packDir, pack)); err != nil {
			gone = append(gone, n)
		}
	}
	return gone, len(names)
}

// writeOne writes one record with a Store of its own, as a call would: its
// maintenance runs after it.
func writeOne(t *testing.T, dir, path string) {
	t.Helper()
	s, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Update(context.Background(), func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("heal"))
		return tx.Put(path, rec{N: 1})
	}); err != nil {
		t.Fatal(err)
	}
}

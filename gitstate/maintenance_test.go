package gitstate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// envStressRounds sets the rounds of TestWritersBesideGitMaintenance (by
// default 2, 1 with -short); docs/STATE.md gives the figures of long runs.
const envStressRounds = "GITSTATE_STRESS_ROUNDS"

// maintenanceCommands is every maintenance git or a user may run beside
// git codex's writers, each as the git command line a loop runs over and
// over. Repository config (gc.auto and gc.autoPackLimit low) makes the
// --auto forms really repack.
var maintenanceCommands = map[string][]string{
	"gc":                     {"gc", "-q"},
	"gc-auto":                {"-c", "gc.autoDetach=false", "gc", "--auto", "-q"},
	"gc-auto-detached":       {"-c", "gc.autoDetach=true", "gc", "--auto", "-q"},
	"gc-cruft":               {"gc", "--cruft", "-q"},
	"gc-prune-now":           {"gc", "--prune=now", "-q"},
	"repack-a-d":             {"repack", "-a", "-d", "-q"},
	"repack-A-d":             {"repack", "-A", "-d", "-q"},
	"repack-cruft":           {"repack", "--cruft", "-d", "-q"},
	"repack-geometric":       {"repack", "--geometric=2", "-d", "-q"},
	"repack-midx-bitmap":     {"repack", "-a", "-d", "-q", "--write-midx", "--write-bitmap-index"},
	"incremental-repack":     {"maintenance", "run", "--task=incremental-repack", "--quiet"},
	"maintenance-every-task": {"maintenance", "run", "--task=gc", "--task=commit-graph", "--task=loose-objects", "--task=incremental-repack", "--task=pack-refs", "--quiet"},
	"maintenance-auto":       {"maintenance", "run", "--auto", "--quiet"},
	"prune":                  {"prune"},
}

// TestWritersBesideGitMaintenance runs writer processes (two reads after
// each write), round after round,
// while one of git's maintenance commands runs in a loop beside them, and
// checks after every round that every acknowledged write is at the tip,
// that every commit and tree of the history is there (git fsck --full
// --strict, and the store's own read of every record), and that nothing
// but git's own lock contention made the maintenance fail. Each command
// has a repository of its own, so the history grows over the rounds.
func TestWritersBesideGitMaintenance(t *testing.T) {
	rounds := 2
	if testing.Short() || raceEnabled {
		rounds = 1
	}
	if n, err := strconv.Atoi(os.Getenv(envStressRounds)); err == nil && n > 0 {
		rounds = n
	}
	only := os.Getenv("GITSTATE_STRESS_ONLY")
	for name, args := range maintenanceCommands {
		if only != "" && !strings.Contains(","+only+",", ","+name+",") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			stressBesideMaintenance(t, args, rounds)
		})
	}
}

func stressBesideMaintenance(t *testing.T, args []string, rounds int) {
	const procs, writes = 3, 40
	dir := newStateRepo(t)
	gitstatetest.Git(t, dir, "config", "gc.auto", "50")
	gitstatetest.Git(t, dir, "config", "gc.autoPackLimit", "4")
	gitstatetest.Git(t, dir, "config", "maintenance.incremental-repack.auto", "2")
	acked := map[string]bool{}
	var runs, contention int
	var failures []string
	start := time.Now()
	for r := 0; r < rounds; r++ {
		ctx, stop := context.WithCancel(context.Background())
		loop := &gitLoop{name: args[0], args: [][]string{args}, pause: 2 * time.Millisecond}
		var wg sync.WaitGroup
		wg.Add(1)
		go loop.run(ctx, dir, &wg)
		ws := make([]*writerProc, procs)
		for i := range ws {
			// two reads after each write: git's repacks roll up the
			// reads' packs apart from the writes' (historypacks.go)
			ws[i] = startWriter(t, dir, fmt.Sprintf("r%dp%d", r, i), writes, envReads+"=2")
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
		runs += int(loop.runs.Load())
		for _, f := range loop.failures {
			if lockContention(f) || concurrentRepack(f) {
				contention++
				t.Logf("round %d, refused by git: %s", r, f)
				continue
			}
			failures = append(failures, fmt.Sprintf("round %d: %s", r, f))
		}
		if t.Failed() {
			break
		}
		recs := tipRecords(t, dir) // reads every record of the tip
		for p := range acked {
			if _, ok := recs[p]; !ok {
				t.Fatalf("round %d: acknowledged write %s missing at the tip", r, p)
			}
		}
		// the repack a writer started may still run: fsck reads the
		// multi-pack-index, then its packs, and a repack that deletes a
		// pack in between makes fsck fail on a repository that is whole
		// (git's own gc --auto would do the same)
		if err := gitstatetest.WaitForLocks(filepath.Join(dir, ".git")); err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
		// a person's `git repack -d --write-midx` racing the store's own
		// repack can leave a multi-pack-index naming a deleted pack
		// (nothing lost; TestUserRepackBesideStoreRepack): the store's
		// next write repairs it, as its next sync would
		writeOne(t, dir, fmt.Sprintf("heal/r%d.json", r))
		if err := gitstatetest.WaitForLocks(filepath.Join(dir, ".git")); err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
		if out, err := gitstatetest.GitErr(dir, "fsck", "--full", "--strict", "--no-dangling"); err != nil {
			t.Fatalf("round %d: git fsck: %v\n%s", r, err, out)
		}
		if got, want := gitstatetest.Git(t, dir, "rev-list", "--count", "--glob=codex/reads/*/*"), strconv.Itoa(2*len(acked)); got != want {
			t.Fatalf("round %d: %s reads on the reads refs, want %s", r, got, want)
		}
	}
	for _, f := range failures {
		t.Errorf("%s", f)
	}
	if len(acked) != rounds*procs*writes {
		t.Errorf("%d writes acknowledged, want %d", len(acked), rounds*procs*writes)
	}
	t.Logf("git %s: %d rounds, %d writes acknowledged and found, %d maintenance runs (%d refused by git's own locks), %s",
		strings.Join(args, " "), rounds, len(acked), runs, contention, time.Since(start).Round(time.Millisecond))
	assertHealthy(t, dir, 0)
}

// concurrentRepack reports a maintenance failure that comes from another
// repack running at the same moment (git's own or the one the store
// started, which git's repack does not wait for): git refuses rather than
// lose anything. Whether anything was lost is checked apart from this,
// after every round: every acknowledged write at the tip, git fsck clean.
func concurrentRepack(msg string) bool {
	for _, s := range []string{
		"unable to add recent objects",
		"failed to run repack",
		"could not find pack",
		"cannot be accessed",
		"cannot open pack index",
		"could not open pack",
		// a pack deleted under a repack that was reading it: pack-objects
		// stops walking (each round's fsck and record check below tell a
		// real loss)
		"index unavailable",
		"Failed to traverse parents",
		// the new pack's temporary file gone before its rename: seen with
		// a hand-run `git repack --cruft -d` beside the store's geometric
		// repack (which now runs again while packs remain), as "could not
		// find pack '.tmp-<pid>-pack-...'" is
		"renaming pack to",
		// git repack --geometric weighs every pack it listed and dies when
		// one was deleted (by the store's repack) before it opened its
		// index: geometry_pack_weight in git 2.39's builtin/repack.c
		"cannot open index for",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

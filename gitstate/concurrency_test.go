package gitstate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// gitLoop runs one git command line over and over until ctx ends and
// records every run; check, when set, validates a successful run's output.
type gitLoop struct {
	name  string
	args  [][]string
	pause time.Duration
	check func(args []string, out string) error

	runs     atomic.Int64
	mu       sync.Mutex
	failures []string
}

func (l *gitLoop) run(ctx context.Context, dir string, wg *sync.WaitGroup) {
	defer wg.Done()
	for ctx.Err() == nil {
		for _, args := range l.args {
			out, err := gitstatetest.GitErr(dir, args...)
			l.runs.Add(1)
			if err == nil && l.check != nil {
				err = l.check(args, out)
			}
			if err != nil {
				l.mu.Lock()
				l.failures = append(l.failures, fmt.Sprintf("git %s: %v: %s", strings.Join(args, " "), err, out))
				l.mu.Unlock()
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(l.pause):
		}
	}
}

var hexID = regexp.MustCompile(`^[0-9a-f]{40}$`)

// lockContention reports a maintenance failure that is git's own lock
// contention (pack-refs and gc both take packed-refs.lock, gc takes gc.pid):
// the command refused to run, which loses nothing.
func lockContention(msg string) bool {
	return strings.Contains(msg, ".lock': File exists") ||
		strings.Contains(msg, "Unable to create") ||
		strings.Contains(msg, "gc is already running") ||
		strings.Contains(msg, "cannot lock ref")
}

// TestMultiProcessWritersWithGitMaintenance runs writer processes against
// one repository while the git CLI packs refs, runs gc and reads the state
// ref, and checks that every write landed exactly once in one linear history.
func TestMultiProcessWritersWithGitMaintenance(t *testing.T) {
	procs, writes := 8, 200
	if testing.Short() || raceEnabled {
		procs, writes = 4, 50
	}
	dir := newStateRepo(t)
	// a low gc.auto makes `git gc --auto` really repack (and prune-packed,
	// and pack refs) while the writers run.
	gitstatetest.Git(t, dir, "config", "gc.auto", "200")
	gitstatetest.Git(t, dir, "config", "gc.autoPackLimit", "4")

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	packRefs := &gitLoop{name: "pack-refs", args: [][]string{{"pack-refs", "--all"}}, pause: 3 * time.Millisecond}
	gc := &gitLoop{name: "gc", args: [][]string{{"gc", "--auto", "--quiet"}}, pause: 20 * time.Millisecond}
	reader := &gitLoop{name: "reader", pause: time.Millisecond, args: [][]string{
		{"rev-parse", gitstate.RefState},
		{"log", "--oneline", "-3", gitstate.RefState},
		{"cat-file", "-p", gitstate.RefState + "^{tree}"},
	}, check: func(args []string, out string) error {
		switch args[0] {
		case "rev-parse":
			if !hexID.MatchString(out) {
				return fmt.Errorf("not an object id")
			}
		case "log":
			if n := len(strings.Split(out, "\n")); out == "" || n > 3 {
				return fmt.Errorf("%d lines", n)
			}
		case "cat-file":
			if !strings.Contains(out, "\tconfig") {
				return fmt.Errorf("root tree lacks config")
			}
		}
		return nil
	}}
	var loops sync.WaitGroup
	for _, l := range []*gitLoop{packRefs, gc, reader} {
		loops.Add(1)
		go l.run(ctx, dir, &loops)
	}

	start := time.Now()
	ws := make([]*writerProc, procs)
	for i := range ws {
		ws[i] = startWriter(t, dir, fmt.Sprintf("p%d", i), writes)
	}
	for _, w := range ws {
		if err := w.wait(5 * time.Minute); err != nil {
			t.Errorf("writer %s: %v\n%s", w.name, err, w.stderr.String())
		}
	}
	elapsed := time.Since(start)
	stop()
	loops.Wait()
	t.Logf("%d writers x %d writes in %s (%.0f commits/s); pack-refs runs %d, gc runs %d, reader commands %d",
		procs, writes, elapsed.Round(time.Millisecond), float64(procs*writes)/elapsed.Seconds(),
		packRefs.runs.Load(), gc.runs.Load(), reader.runs.Load())

	for _, f := range reader.failures {
		t.Errorf("reader: %s", f)
	}
	for _, l := range []*gitLoop{packRefs, gc} {
		for _, f := range l.failures {
			if lockContention(f) {
				t.Logf("%s (git's own lock contention): %s", l.name, f)
				continue
			}
			t.Errorf("%s: %s", l.name, f)
		}
		if int(l.runs.Load()) <= len(l.failures) {
			t.Errorf("%s never succeeded", l.name)
		}
	}

	total := procs * writes
	acked := map[string]bool{}
	for _, w := range ws {
		a := w.acked()
		if len(a) != writes {
			t.Errorf("writer %s acknowledged %d writes, want %d", w.name, len(a), writes)
		}
		for _, p := range a {
			acked[p] = true
		}
	}
	recs := tipRecords(t, dir)
	n := 0
	for p, b := range recs {
		if !strings.HasPrefix(p, "w/") {
			continue
		}
		n++
		if !acked[p] {
			t.Errorf("record %s at the tip was never acknowledged", p)
		}
		var r writerRec
		if err := json.Unmarshal(b, &r); err != nil || writerPath(r.Writer, r.I) != p {
			t.Errorf("record %s holds %q", p, b)
		}
	}
	if n != total {
		t.Errorf("records at the tip = %d, want %d", n, total)
	}
	for p := range acked {
		if _, ok := recs[p]; !ok {
			t.Errorf("acknowledged write %s missing at the tip", p)
		}
	}
	// one commit per write: each names its record in Codex-Target.
	targets := gitstatetest.Git(t, dir, "log", "--format=%(trailers:key=Codex-Target,valueonly)", gitstate.RefState)
	seen := map[string]int{}
	for _, line := range strings.Split(targets, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			seen[line]++
		}
	}
	if len(seen) != total {
		t.Errorf("commits naming a target = %d, want %d", len(seen), total)
	}
	for p, c := range seen {
		if c != 1 {
			t.Errorf("%s committed %d times", p, c)
		}
	}
	if got := gitstatetest.Git(t, dir, "log", "-1", "--format=%(trailers:key=Codex-Clock,valueonly)", gitstate.RefState); got != fmt.Sprint(total+1) {
		t.Errorf("tip clock = %s, want %d", got, total+1)
	}
	if packs, _ := filepath.Glob(filepath.Join(commonDir(t, dir), "objects", "pack", "*.pack")); len(packs) == 0 {
		t.Errorf("gc --auto never packed (no packs)")
	}
	assertHealthy(t, dir, total+1)
}

// TestInProcessConcurrentUpdates shares one Store between goroutines and
// runs several Stores on the same repository at once, with a reader checking
// that the state it sees only grows.
func TestInProcessConcurrentUpdates(t *testing.T) {
	shared, perShared, stores, perStore := 8, 50, 3, 2
	writes := 25
	if testing.Short() || raceEnabled {
		shared, perShared, writes = 4, 20, 10
	}
	dir := newStateRepo(t)
	ctx := context.Background()
	open := func() *gitstate.Store {
		s, err := gitstate.Open(dir, gitstate.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	one := open()
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := map[string]bool{}
	write := func(s *gitstate.Store, name string, n int) {
		defer wg.Done()
		for i := 0; i < n; i++ {
			p := writerPath(name, i)
			c, err := s.Update(ctx, func(tx *gitstate.Tx) error {
				tx.SetMeta(meta("write"))
				// read-modify-write of a shared counter: lost updates show.
				var cnt rec
				if err := tx.Get("counter.json", &cnt); err != nil && !isNotFound(err) {
					return err
				}
				cnt.N++
				if err := tx.Put("counter.json", cnt); err != nil {
					return err
				}
				return tx.Put(p, writerRec{Writer: name, I: i})
			})
			if err != nil {
				t.Errorf("%s: %v", name, err)
				return
			}
			if c.Parent == "" || c.Hash == "" {
				t.Errorf("%s: commit %+v", name, c)
			}
			mu.Lock()
			acked[p] = true
			mu.Unlock()
		}
	}
	for g := 0; g < shared; g++ {
		wg.Add(1)
		go write(one, fmt.Sprintf("shared%d", g), perShared)
	}
	for si := 0; si < stores; si++ {
		s := open()
		for g := 0; g < perStore; g++ {
			wg.Add(1)
			go write(s, fmt.Sprintf("store%d-%d", si, g), writes)
		}
	}
	// a reader on the shared store: clocks and record counts never go back,
	// and each snapshot is consistent (counter == number of w/ records).
	done := make(chan struct{})
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		var lastClock gitstate.Clock
		for {
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
			err := one.View(ctx, func(sn *gitstate.Snapshot) error {
				if sn.Clock() < lastClock {
					return fmt.Errorf("clock went back: %d after %d", sn.Clock(), lastClock)
				}
				lastClock = sn.Clock()
				var cnt rec
				if err := sn.Get("counter.json", &cnt); err != nil && !isNotFound(err) {
					return err
				}
				n, err := countRecords(sn, "w", 3)
				if err != nil {
					return err
				}
				if n != cnt.N {
					return fmt.Errorf("snapshot at clock %d: %d records, counter %d", sn.Clock(), n, cnt.N)
				}
				return nil
			})
			if err != nil {
				t.Errorf("reader: %v", err)
				return
			}
		}
	}()
	wg.Wait()
	close(done)
	<-readerDone
	t.Logf("writes done after %s", time.Since(start).Round(time.Millisecond))

	total := shared*perShared + stores*perStore*writes
	if len(acked) != total {
		t.Fatalf("acknowledged %d writes, want %d", len(acked), total)
	}
	recs := tipRecords(t, dir)
	var cnt rec
	if err := json.Unmarshal(recs["counter.json"], &cnt); err != nil || cnt.N != total {
		t.Errorf("counter = %d (%v), want %d: a read-modify-write was lost", cnt.N, err, total)
	}
	for p := range acked {
		if _, ok := recs[p]; !ok {
			t.Errorf("acknowledged write %s missing", p)
		}
	}
	if len(recs) != total+2 {
		t.Errorf("records = %d, want %d", len(recs), total+2)
	}
	assertHealthy(t, dir, total+1)
	t.Logf("checks done after %s", time.Since(start).Round(time.Millisecond))
}

func isNotFound(err error) bool {
	return err != nil && errors.Is(err, gitstate.ErrNotFound)
}

// writerLockMarker returns the content of the writer lock file.
func writerLockMarker(t testing.TB, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(commonDir(t, dir), "codex", "writer.lock"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadsAfterGitRepack: a Store that has loaded the pack indexes keeps
// reading and writing after `git gc` replaced the packs it knew (go-git then
// reports "packfile not found" for objects it indexed in a deleted pack).
func TestReadsAfterGitRepack(t *testing.T) {
	ctx := context.Background()
	dir := newStateRepo(t)
	s, err := gitstate.Open(dir, gitstate.Options{PackEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	put := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			if _, err := putOne(s, fmt.Sprintf("r/%02d/%d.json", i%7, i)); err != nil {
				t.Fatalf("put %d: %v", i, err)
			}
		}
	}
	walk := func(want int) {
		t.Helper()
		n := 0
		err := s.View(ctx, func(sn *gitstate.Snapshot) error {
			return sn.Walk("r", func(string, []byte) error { n++; return nil })
		})
		if err != nil || n != want {
			t.Fatalf("walk after repack: %d records, %v; want %d", n, err, want)
		}
	}
	put(0, 20)
	gitstatetest.Git(t, dir, "gc", "--prune=now", "--quiet")
	walk(20) // loads the index of the first pack
	old := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)
	for round := 1; round <= 3; round++ {
		put(20*round, 20*round+20)
		gitstatetest.Git(t, dir, "gc", "--prune=now", "--quiet") // new pack, old one deleted
		packs, _ := filepath.Glob(filepath.Join(commonDir(t, dir), "objects", "pack", "*.pack"))
		if len(packs) != 1 {
			t.Fatalf("round %d: %d packs after gc, want 1", round, len(packs))
		}
		// the first read after the repack is of objects the store indexed
		// in the pack gc just deleted.
		n := 0
		err := s.ViewAt(ctx, old, func(sn *gitstate.Snapshot) error {
			return sn.Walk("r", func(string, []byte) error { n++; return nil })
		})
		if err != nil || n != 20*round {
			t.Fatalf("round %d: walk of %s after repack: %d records, %v", round, old, n, err)
		}
		old = gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)
		walk(20*round + 20)
		if err := s.Events(ctx, "", func(gitstate.Event) bool { return true }); err != nil {
			t.Fatalf("round %d: history after repack: %v", round, err)
		}
	}
	put(80, 81)
	assertHealthy(t, dir, 82)
}

// countRecords counts the records depth levels below dir with List alone
// (trees only, no blobs read).
func countRecords(sn *gitstate.Snapshot, dir string, depth int) (int, error) {
	es, err := sn.List(dir)
	if err != nil {
		return 0, err
	}
	if depth == 1 {
		return len(es), nil
	}
	n := 0
	for _, e := range es {
		if !e.Dir {
			continue
		}
		c, err := countRecords(sn, dir+"/"+e.Name, depth-1)
		if err != nil {
			return 0, err
		}
		n += c
	}
	return n, nil
}

package gitstate_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestCrashKilledWritersLoseNoAcknowledgedWrite kills writer processes with
// SIGKILL at random moments, round after round, and checks after each round
// that every acknowledged write is at the tip, and at the end that the
// repository is sound and the next writer is not wedged.
func TestCrashKilledWritersLoseNoAcknowledgedWrite(t *testing.T) {
	rounds, maxDelay := 30, 50
	if testing.Short() || raceEnabled {
		rounds = 10
	}
	if raceEnabled {
		maxDelay = 150 // instrumented writers take longer to reach their first commit
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
	dir := newStateRepo(t)
	acked := map[string]bool{}
	killedMidSwap := 0
	for r := 0; r < rounds; r++ {
		n := 2 + rng.IntN(3)
		ws := make([]*writerProc, n)
		for i := range ws {
			ws[i] = startWriter(t, dir, fmt.Sprintf("r%02dw%d", r, i), 0)
		}
		var kills sync.WaitGroup
		for _, w := range ws {
			w.waitReady(t, 30*time.Second)
			delay := time.Duration(rng.IntN(maxDelay+1)) * time.Millisecond
			kills.Add(1)
			go func() {
				defer kills.Done()
				time.Sleep(delay)
				w.cmd.Process.Signal(syscall.SIGKILL)
			}()
		}
		kills.Wait()
		for _, w := range ws {
			err := w.wait(30 * time.Second)
			var ee interface{ Sys() any }
			if !errors.As(err, &ee) {
				t.Fatalf("writer %s: %v (want killed)\n%s", w.name, err, w.stderr.String())
			}
			if st, ok := ee.Sys().(syscall.WaitStatus); !ok || st.Signal() != syscall.SIGKILL {
				t.Fatalf("writer %s ended with %v, not SIGKILL\n%s", w.name, err, w.stderr.String())
			}
			for _, p := range w.acked() {
				acked[p] = true
			}
		}
		_, lockErr := os.Stat(filepath.Join(commonDir(t, dir), "refs", "codex", "state.lock"))
		if lockErr == nil || writerLockMarker(t, dir) != "" {
			killedMidSwap++
		}
		present := map[string]bool{}
		for _, p := range gitTreePaths(t, dir, gitstate.RefState) {
			present[p] = true
		}
		for p := range acked {
			if !present[p] {
				t.Fatalf("round %d: acknowledged write %s missing at the tip", r, p)
			}
		}
	}
	t.Logf("%d rounds, %d acknowledged writes, %d rounds ended with a writer killed mid-swap",
		rounds, len(acked), killedMidSwap)
	if len(acked) == 0 {
		t.Fatal("no writer got a write acknowledged: the kills came too early to test anything")
	}

	// the next writer proceeds, promptly.
	s, err := gitstate.Open(dir, gitstate.Options{LockTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Update(context.Background(), func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("after-crashes"))
		return tx.Put("after.json", rec{N: 1})
	}); err != nil {
		t.Fatalf("update after the crashes: %v", err)
	}
	// every commit added exactly one record, so commits = records.
	paths := gitTreePaths(t, dir, gitstate.RefState)
	for p := range acked {
		if !containsSorted(paths, p) {
			t.Errorf("acknowledged write %s missing", p)
		}
	}
	assertHealthy(t, dir, len(paths))
	// what killed writers left is gone after the next one: their .keep
	// files (which would keep their packs out of every repack) and
	// temporary files; and git's own gc runs (no gc.pid.lock left behind)
	common := commonDir(t, dir)
	keeps, _ := filepath.Glob(filepath.Join(common, "objects", "pack", "*.keep"))
	for _, k := range keeps {
		if b, _ := os.ReadFile(k); strings.HasPrefix(string(b), "git-codex ") {
			t.Errorf("a killed writer's keep is still there: %s", filepath.Base(k))
		}
	}
	if tmps, _ := os.ReadDir(filepath.Join(common, "codex", "tmp")); len(tmps) != 0 {
		t.Errorf("%d temporary files left in codex/tmp", len(tmps))
	}
	if _, err := os.Stat(filepath.Join(common, "gc.pid.lock")); err == nil {
		t.Errorf("gc.pid.lock left behind: git gc would refuse to run")
	}
	gitstatetest.WaitForMaintenance(t, dir)
	gitstatetest.Git(t, dir, "gc", "-q")
	assertHealthy(t, dir, len(paths))
}

func containsSorted(sorted []string, s string) bool {
	i, j := 0, len(sorted)
	for i < j {
		h := (i + j) / 2
		if sorted[h] < s {
			i = h + 1
		} else {
			j = h
		}
	}
	return i < len(sorted) && sorted[i] == s
}

// holdGitLock creates refs/codex/state.lock the way git does when it locks
// the ref (pack-refs, update-ref, fetch), and returns its path.
func holdGitLock(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(commonDir(t, dir), "refs", "codex", "state.lock")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

func inodeOf(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

func putOne(s *gitstate.Store, p string) (gitstate.Commit, error) {
	return s.Update(context.Background(), func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("put"))
		return tx.Put(p, rec{N: 1})
	})
}

// TestStaleRefLockOfDeadWriterIsRemoved simulates a writer that died between
// creating "<ref>.lock" and renaming it: the swap marker in the writer lock
// says the lock is a dead git codex writer's, so the next Update removes it
// instead of waiting for it.
func TestStaleRefLockOfDeadWriterIsRemoved(t *testing.T) {
	dir := newStateRepo(t)
	lock := holdGitLock(t, dir)
	if err := os.WriteFile(filepath.Join(commonDir(t, dir), "codex", "writer.lock"), []byte("swap"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := gitstate.Open(dir, gitstate.Options{LockTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := putOne(s, "x.json")
	if err != nil {
		t.Fatalf("update with a dead writer's lock: %v", err)
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState); got != c.Hash {
		t.Errorf("ref = %s, want %s", got, c.Hash)
	}
	if _, err := os.Stat(lock); err == nil {
		t.Error("stale lock still there")
	}
	assertHealthy(t, dir, 2)
}

// TestStaleStagedRefOfDeadWriter: a writer killed after creating its staged
// ref value ("codex/swap.tmp") but before recording it in the marker leaves
// the file behind; the next writer replaces it and commits.
func TestStaleStagedRefOfDeadWriter(t *testing.T) {
	dir := newStateRepo(t)
	staged := filepath.Join(commonDir(t, dir), "codex", "swap.tmp")
	if err := os.WriteFile(staged, []byte("0000000000000000000000000000000000000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := putOne(s, "x.json")
	if err != nil {
		t.Fatalf("update beside a stale staged ref: %v", err)
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState); got != c.Hash {
		t.Errorf("ref = %s, want %s", got, c.Hash)
	}
	if _, err := os.Stat(staged); err == nil {
		t.Error("staged ref file still there after the commit")
	}
	assertHealthy(t, dir, 2)
}

// TestWriterKilledHoldingRefLock kills a real writer process while it holds
// "<ref>.lock" (parked there by a test hook), then checks that the next
// writer recovers: the ref is the old one or the new one, never broken.
func TestWriterKilledHoldingRefLock(t *testing.T) {
	t.Run("link", func(t *testing.T) { testWriterKilledHoldingRefLock(t, false) })
	t.Run("no-link", func(t *testing.T) { testWriterKilledHoldingRefLock(t, true) })
}

func testWriterKilledHoldingRefLock(t *testing.T, noLink bool) {
	dir := newStateRepo(t)
	before := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)
	env := []string{envHang + "=locked"}
	if noLink {
		env = append(env, envNoLink+"=1")
	}
	w := startWriter(t, dir, "dead", 1, env...)
	select {
	case <-w.hung:
	case <-time.After(30 * time.Second):
		w.kill()
		t.Fatalf("writer never reached the locked stage: %s", w.stderr.String())
	}
	lock := filepath.Join(commonDir(t, dir), "refs", "codex", "state.lock")
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("writer parked in the swap but holds no ref lock: %v", err)
	}
	w.kill()
	w.wait(30 * time.Second)
	if len(w.acked()) != 0 {
		t.Fatal("a writer killed mid-swap acknowledged its write")
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState); got != before {
		t.Errorf("ref moved by a writer killed before its rename: %s -> %s", before, got)
	}
	// git itself still reads the state.
	gitstatetest.Git(t, dir, "cat-file", "-e", gitstate.RefState+"^{tree}")

	s, err := gitstate.Open(dir, gitstate.Options{LockTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if noLink {
		noHardLinks(s)
	}
	c, err := putOne(s, "next.json")
	if err != nil {
		t.Fatalf("next writer wedged by a dead writer's lock: %v", err)
	}
	if c.Parent != before {
		t.Errorf("next commit's parent = %s, want %s", c.Parent, before)
	}
	if _, err := os.Stat(lock); err == nil {
		t.Error("dead writer's lock still there")
	}
	assertHealthy(t, dir, 2)
}

// TestRefLockHeldByGitTimesOut: a "<ref>.lock" that no git codex writer
// claims belongs to git. Update waits for it, fails with ErrLockTimeout, and
// leaves it alone, now and on the next attempt.
func TestRefLockHeldByGitTimesOut(t *testing.T) {
	t.Run("link", func(t *testing.T) { testRefLockHeldByGitTimesOut(t, false) })
	t.Run("no-link", func(t *testing.T) { testRefLockHeldByGitTimesOut(t, true) })
}

func testRefLockHeldByGitTimesOut(t *testing.T, noLink bool) {
	dir := newStateRepo(t)
	before := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)
	s, err := gitstate.Open(dir, gitstate.Options{LockTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if noLink {
		links := noHardLinks(s)
		defer func() {
			if links.Load() == 0 {
				t.Error("the store never tried a hard link")
			}
		}()
	}
	lock := holdGitLock(t, dir)
	ino := inodeOf(t, lock)
	for attempt := 1; attempt <= 2; attempt++ {
		start := time.Now()
		undone := false
		_, err = s.Update(context.Background(), func(tx *gitstate.Tx) error {
			tx.OnAbort(func(context.Context) error { undone = true; return nil })
			tx.SetMeta(meta("put"))
			return tx.Put("x.json", rec{N: attempt})
		})
		if !errors.Is(err, gitstate.ErrLockTimeout) {
			t.Fatalf("attempt %d: err = %v, want ErrLockTimeout", attempt, err)
		}
		if d := time.Since(start); d < 300*time.Millisecond {
			t.Errorf("attempt %d gave up after %s, before the 300ms timeout", attempt, d)
		}
		if !undone {
			t.Errorf("attempt %d: abort hooks did not run", attempt)
		}
		if _, err := os.Stat(lock); err != nil || inodeOf(t, lock) != ino {
			t.Fatalf("attempt %d: git's lock was removed or replaced (%v)", attempt, err)
		}
		if m := writerLockMarker(t, dir); m != "" {
			t.Errorf("attempt %d: writer lock marker %q left after the timeout", attempt, m)
		}
		if got := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState); got != before {
			t.Fatalf("attempt %d: ref moved while git held its lock", attempt)
		}
	}
	// git releases its lock while a writer waits: the writer proceeds.
	s2, err := gitstate.Open(dir, gitstate.Options{LockTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	released := make(chan time.Time, 1)
	go func() {
		time.Sleep(200 * time.Millisecond)
		released <- time.Now()
		os.Remove(lock)
	}()
	c, err := putOne(s2, "y.json")
	if err != nil {
		t.Fatalf("update after git released its lock: %v", err)
	}
	if end, at := time.Now(), <-released; end.Before(at) {
		t.Error("update finished before git released its lock")
	}
	if c.Parent != before {
		t.Errorf("parent = %s, want %s", c.Parent, before)
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState); got != c.Hash {
		t.Errorf("ref = %s, want %s", got, c.Hash)
	}
	paths := gitTreePaths(t, dir, gitstate.RefState)
	if strings.Join(paths, ",") != "config/version.json,y.json" {
		t.Errorf("tree = %v", paths)
	}
	assertHealthy(t, dir, 2)
}

// TestWriterKilledWhileWaitingForGitLock: a writer killed while it waits for
// git's "<ref>.lock" must not make the next writer take git's lock for a
// dead writer's.
func TestWriterKilledWhileWaitingForGitLock(t *testing.T) {
	dir := newStateRepo(t)
	before := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)
	lock := holdGitLock(t, dir)
	ino := inodeOf(t, lock)
	w := startWriter(t, dir, "waiter", 1, envHang+"=wait", envLockTimeout+"=1m")
	select {
	case <-w.hung:
	case <-time.After(30 * time.Second):
		w.kill()
		t.Fatalf("writer never waited for the lock: %s", w.stderr.String())
	}
	w.kill()
	w.wait(30 * time.Second)

	s, err := gitstate.Open(dir, gitstate.Options{LockTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := putOne(s, "x.json"); !errors.Is(err, gitstate.ErrLockTimeout) {
		t.Fatalf("update while git holds the lock: err = %v, want ErrLockTimeout", err)
	}
	if _, err := os.Stat(lock); err != nil || inodeOf(t, lock) != ino {
		t.Fatalf("git's lock was taken for a dead writer's (%v)", err)
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState); got != before {
		t.Fatal("ref moved while git held its lock")
	}
	os.Remove(lock)
	if _, err := putOne(s, "x.json"); err != nil {
		t.Fatalf("update after git released its lock: %v", err)
	}
	assertHealthy(t, dir, 2)
}

package gitstate_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestFetchRemovesKilledFetchLock: a fetch killed while it held a
// remote-tracking ref's lock leaves "<ref>.lock" behind (the CI saw it:
// sync killed with its process group); the next fetch takes a lock older
// than a fetch ever holds one for as a leftover, removes it and fetches,
// while a lock on any other ref is left alone.
func TestFetchRemovesKilledFetchLock(t *testing.T) {
	ctx := context.Background()
	remote := filepath.Join(t.TempDir(), "remote.git")
	gitstatetest.Git(t, os.TempDir(), "init", "-q", "--bare", remote)
	src := newStateRepo(t)
	gitstatetest.Git(t, src, "push", "-q", remote, gitstate.RefState+":"+gitstate.RefState)

	dir := gitstatetest.NewRepo(t)
	gitstatetest.Git(t, dir, "remote", "add", "origin", remote)
	s, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if found, err := s.Fetch(ctx, "origin", nil); err != nil || !found {
		t.Fatalf("first fetch: found %v, %v", found, err)
	}

	// the remote moves on; a killed fetch left the tracking ref's lock
	gitstatetest.Git(t, src, "update-ref", gitstate.RefState, gitstatetest.Git(t, src, "commit-tree", "-m", "next", "-p", gitstate.RefState, gitstate.RefState+"^{tree}"))
	want := gitstatetest.Git(t, src, "rev-parse", gitstate.RefState)
	gitstatetest.Git(t, src, "push", "-q", remote, gitstate.RefState+":"+gitstate.RefState)
	cd := commonDir(t, dir)
	lock := filepath.Join(cd, filepath.FromSlash(gitstate.RemoteStateRef("origin"))+".lock")
	other := filepath.Join(cd, "refs", "heads", "other.lock")
	for _, p := range []string{lock, other} {
		if err := os.WriteFile(p, []byte("0000000000000000000000000000000000000000\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-time.Minute)
		os.Chtimes(p, old, old)
	}

	start := time.Now()
	if _, err := s.Fetch(ctx, "origin", nil); err != nil {
		t.Fatalf("fetch after a killed fetch: %v", err)
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", gitstate.RemoteStateRef("origin")); got != want {
		t.Errorf("tracking ref at %s, want %s", got, want)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Errorf("the killed fetch's lock is still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a lock outside the remote-tracking refs was touched: %v", err)
	}
	t.Logf("fetched in %v", time.Since(start).Round(time.Millisecond))
}

// TestFetchWaitsOutALiveLock: a lock younger than a leftover is another
// fetch at work; the fetch waits for it to go rather than removing it.
func TestFetchWaitsOutALiveLock(t *testing.T) {
	ctx := context.Background()
	remote := filepath.Join(t.TempDir(), "remote.git")
	gitstatetest.Git(t, os.TempDir(), "init", "-q", "--bare", remote)
	src := newStateRepo(t)
	gitstatetest.Git(t, src, "push", "-q", remote, gitstate.RefState+":"+gitstate.RefState)
	dir := gitstatetest.NewRepo(t)
	gitstatetest.Git(t, dir, "remote", "add", "origin", remote)
	s, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lock := filepath.Join(commonDir(t, dir), filepath.FromSlash(gitstate.RemoteStateRef("origin"))+".lock")
	os.MkdirAll(filepath.Dir(lock), 0o755)
	if err := os.WriteFile(lock, []byte("live\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// the other fetch finishes after 300 ms, writing the ref from its lock
	// with its own content; ours must not have removed that lock meanwhile
	done := make(chan string)
	go func() {
		time.Sleep(300 * time.Millisecond)
		b, _ := os.ReadFile(lock)
		os.Remove(lock)
		done <- string(b)
	}()
	if found, err := s.Fetch(ctx, "origin", nil); err != nil || !found {
		t.Fatalf("fetch: found %v, %v", found, err)
	}
	if got := <-done; !strings.HasPrefix(got, "live") {
		t.Errorf("the live lock was replaced or removed under its owner: %q", got)
	}
}

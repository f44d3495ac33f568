package gitstate_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// syncPair is a clone that syncs with origin (s, dir) and another clone
// whose writes origin gets (s2).
func syncPair(t *testing.T) (s *gitstate.Store, dir string, s2 *gitstate.Store, opts gitstate.SyncOptions) {
	t.Helper()
	ctx := context.Background()
	s, dir = openInit(t)
	putRaw(t, s, "a.json", "1")
	origin := filepath.Join(t.TempDir(), "origin.git")
	gitstatetest.Git(t, filepath.Dir(origin), "init", "-q", "--bare", origin)
	gitstatetest.Git(t, dir, "remote", "add", "origin", origin)
	opts = gitstate.SyncOptions{Resolve: clockResolver, Finish: finishMeta, Push: true}
	if _, err := s.Sync(ctx, "origin", opts); err != nil {
		t.Fatal(err)
	}
	dir2 := gitstatetest.NewRepo(t)
	gitstatetest.Git(t, dir2, "remote", "add", "origin", origin)
	s2, err := gitstate.Open(dir2, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s2.Close() })
	if _, err := s2.Sync(ctx, "origin", opts); err != nil {
		t.Fatal(err)
	}
	return s, dir, s2, opts
}

// git checks a fetch's --negotiation-tip objects in the packs it listed
// when it started, without looking again: a repack that replaces the
// pack holding one in between makes `git fetch` die "the object <tip>
// does not exist" though it is there. A sync then fetches again. Here a
// git of the test's (first on PATH, the real one behind it) dies so on a
// sync's first fetch with tips, as git 2.39 does beside `git repack -ad`;
// TestSyncBesideRepack runs the real race.
func TestSyncFetchesAgainWhenGitMissedATip(t *testing.T) {
	ctx := context.Background()
	s, dir, s2, opts := syncPair(t)
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	once := filepath.Join(bin, "died")
	fetches := filepath.Join(bin, "fetches")
	script := fmt.Sprintf(`#!/bin/sh
case " $* " in
*" fetch "*--negotiation-tip*)
	echo x >> %[1]q
	if [ ! -e %[2]q ]; then
		: > %[2]q
		echo "fatal: the object refs/codex/state does not exist" >&2
		exit 128
	fi;;
esac
exec %[3]q "$@"
`, fetches, once, real)
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	theirs := putRaw(t, s2, "b.json", "2")
	if _, err := s2.Sync(ctx, "origin", opts); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if _, err := s.Sync(ctx, "origin", opts); err != nil {
		t.Fatalf("a sync whose first fetch lost a tip to a repack: %v", err)
	}
	b, err := os.ReadFile(fetches)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "x"); n != 2 {
		t.Errorf("%d fetches with negotiation tips, want 2 (the one git died on, then one more)", n)
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", gitstate.RemoteStateRef("origin")); got != theirs.Hash {
		t.Errorf("the remote-tracking state is %s, want the other clone's %s", got, theirs.Hash)
	}
	if out := gitstatetest.Git(t, dir, "cat-file", "-p", gitstate.RefState+":b.json"); out != "2" {
		t.Errorf("the state's b.json is %q after the sync, want the other clone's 2", out)
	}
}

// A sync beside git's own maintenance: while the clone syncs round after
// round (each fetching the other clone's latest write), `git gc` and `git
// repack --geometric=2` run again and again in it, 20 ms apart, each
// replacing packs the last wrote (a new object each time, so the packs'
// names change).
// Every sync must succeed and bring the write.
func TestSyncBesideRepack(t *testing.T) {
	if testing.Short() {
		t.Skip("rounds of syncs beside a repack loop")
	}
	ctx := context.Background()
	s, dir, s2, opts := syncPair(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	repacks := 0
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			blob := exec.Command("git", "hash-object", "-w", "--stdin")
			blob.Dir = dir
			blob.Stdin = strings.NewReader(rand.Text())
			if err := blob.Run(); err != nil {
				t.Errorf("hash-object: %v", err)
				return
			}
			// git's own maintenance, as it runs beside writers: gc
			// (everything into one pack, what no ref reaches kept loose
			// until it expires) and the geometric repack of `git
			// maintenance` and of ours, in turn
			args := []string{"gc", "--quiet"}
			if repacks%2 == 1 {
				args = []string{"repack", "-d", "-q", "--geometric=2"}
			}
			repack := exec.Command("git", args...)
			repack.Dir = dir
			if out, err := repack.CombinedOutput(); err != nil {
				t.Errorf("repack: %v %s", err, out)
				return
			}
			repacks++
			time.Sleep(20 * time.Millisecond) // git's maintenance runs now and then, not back to back
		}
	}()
	halt := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer halt()
	for i := 0; i < 60; i++ {
		theirs := putRaw(t, s2, "b.json", fmt.Sprint(i))
		if _, err := s2.Sync(ctx, "origin", opts); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Sync(ctx, "origin", opts); err != nil {
			t.Fatalf("sync %d beside a repack loop: %v", i, err)
		}
		if got := gitstatetest.Git(t, dir, "rev-parse", gitstate.RemoteStateRef("origin")); got != theirs.Hash {
			// (our own pushes move origin past theirs only when we write)
			t.Fatalf("round %d: the remote-tracking state is %s, want %s", i, got, theirs.Hash)
		}
	}
	halt()
	t.Logf("%d repacks beside 60 syncs", repacks)
}

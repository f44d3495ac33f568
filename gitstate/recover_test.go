package gitstate_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// removeObject deletes a loose object, as `git gc --prune=now` beside a
// writer did (issue 16 item 11).
func removeObject(t *testing.T, dir, hash string) {
	t.Helper()
	// the store writes packs: unpack them all into loose objects first
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	for _, p := range packs {
		moved := filepath.Join(t.TempDir(), filepath.Base(p))
		if err := os.Rename(p, moved); err != nil {
			t.Fatal(err)
		}
		os.Remove(strings.TrimSuffix(p, ".pack") + ".idx")
		f, err := os.Open(moved)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "-C", dir, "unpack-objects", "-q")
		cmd.Stdin = f
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("unpack %s: %v\n%s", p, err, out)
		}
		f.Close()
	}
	p := filepath.Join(dir, ".git", "objects", hash[:2], hash[2:])
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
}

// TestUnreadableTipIsNotBuiltOn is issue 16 item 11: after the tip lost a
// subtree, later calls still committed on top of it (refusals included) and
// fsck failed. Now a transaction that meets a missing object commits
// nothing and names the last state that reads whole; Restore brings it back
// and fsck is clean again.
func TestUnreadableTipIsNotBuiltOn(t *testing.T) {
	ctx := context.Background()
	s, dir := openInit(t)
	put := func(path string) error {
		_, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(meta("put"))
			return tx.Put(path, rec{N: 1})
		})
		return err
	}
	if err := put("mail/bob/ab/m-1.json"); err != nil {
		t.Fatal(err)
	}
	good := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)
	if err := put("mail/bob/ab/m-2.json"); err != nil {
		t.Fatal(err)
	}
	tip := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)
	// the tip's own mail/bob/ab tree is gone
	removeObject(t, dir, gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState+":mail/bob/ab"))

	// a call that reads the hole, and a refusal that read it: no commit
	for _, fn := range []func(tx *gitstate.Tx) error{
		func(tx *gitstate.Tx) error {
			tx.SetMeta(meta("read"))
			var r rec
			return tx.Get("mail/bob/ab/m-1.json", &r)
		},
		func(tx *gitstate.Tx) error {
			var r rec
			if err := tx.Get("mail/bob/ab/m-2.json", &r); err != nil {
				tx.Discard()
				tx.SetMeta(meta("refused"))
			}
			return nil
		},
	} {
		_, err := s.Update(ctx, fn)
		var ue *gitstate.UnreadableError
		if !errors.As(err, &ue) || !errors.Is(err, gitstate.ErrObjectMissing) {
			t.Fatalf("got %v, want an UnreadableError", err)
		}
		if ue.LastReadable != good || ue.Behind != 1 || !strings.Contains(err.Error(), "git codex init --restore "+good) {
			t.Errorf("last readable = %s (%d back), want %s: %v", ue.LastReadable, ue.Behind, good, err)
		}
		if got := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState); got != tip {
			t.Fatalf("a commit was built on the unreadable tip")
		}
	}
	// the root tree gone: refused before the handler runs
	if _, err := s.Restore(ctx, tip, meta("restore")); err == nil {
		t.Error("restored a state that does not read whole")
	}
	c, err := s.Restore(ctx, good, meta("restore"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Parent != good || c.Clock != 4 {
		t.Errorf("restored commit %+v", c)
	}
	if out, err := gitstatetest.GitErr(dir, "fsck", "--strict", "--no-dangling"); err != nil {
		t.Errorf("fsck after restore: %v\n%s", err, out)
	}
	if err := put("mail/bob/ab/m-3.json"); err != nil {
		t.Fatalf("write after restore: %v", err)
	}
	// a tip that reads whole is not restored over
	if _, err := s.Restore(ctx, good, meta("restore")); !errors.Is(err, gitstate.ErrAlreadyInitialized) {
		t.Errorf("restore over a whole state: %v", err)
	}
}

// TestMissingRootRefusedBeforeTheCall: the tip's root tree (or a top-level
// subtree) gone is found before the handler runs, even by a call that
// reads nothing.
func TestMissingRootRefusedBeforeTheCall(t *testing.T) {
	ctx := context.Background()
	s, dir := openInit(t)
	if _, err := s.Update(ctx, func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("put"))
		return tx.Put("agents/a.json", rec{N: 1})
	}); err != nil {
		t.Fatal(err)
	}
	tip := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)
	removeObject(t, dir, gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState+":agents"))
	ran := false
	_, err := s.Update(ctx, func(tx *gitstate.Tx) error {
		ran = true
		tx.SetMeta(meta("noop"))
		return nil
	})
	if !errors.Is(err, gitstate.ErrObjectMissing) || ran {
		t.Fatalf("err %v, handler ran %v", err, ran)
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState); got != tip {
		t.Fatal("committed on a tip whose top-level tree is gone")
	}
}

package gitstate_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestCommitAt: a transaction writes a parentless commit of exactly the
// given files at another ref under refs/codex/, together with its state
// commit; a discarded or failed transaction writes none; refs the store or
// sync own, and names git refuses, are refused.
func TestCommitAt(t *testing.T) {
	ctx := context.Background()
	s, dir := openInit(t)
	const ref = "refs/codex/archive/c1"
	files := map[string][]byte{"manifest.json": []byte("{}\n"), "handoff/codex.json": []byte("{\"a\":1}\n")}
	side := gitstate.Meta{Summary: "archived", Trailers: []gitstate.Trailer{{Key: gitstate.TrailerTool, Value: "cycle_archive"}}}

	// discarded, then failed: nothing at the ref
	if _, err := s.Update(ctx, func(tx *gitstate.Tx) error {
		if err := tx.CommitAt(ref, files, side); err != nil {
			return err
		}
		tx.Discard()
		tx.SetMeta(meta("refused"))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if _, err := s.Update(ctx, func(tx *gitstate.Tx) error {
		tx.CommitAt(ref, files, side)
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if out, err := gitstatetest.GitErr(dir, "rev-parse", "--verify", "--quiet", ref); err == nil {
		t.Fatalf("%s exists after a discard and a failure: %s", ref, out)
	}

	c, err := s.Update(ctx, func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("archive"))
		return tx.CommitAt(ref, files, side)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := gitstatetest.Git(t, dir, "ls-tree", "-r", "--name-only", ref); got != "handoff/codex.json\nmanifest.json" {
		t.Fatalf("tree at %s:\n%s", ref, got)
	}
	if got := gitstatetest.Git(t, dir, "log", "--format=%s|%P|%(trailers:key=Codex-Tool,valueonly)", ref); got != "archived||cycle_archive" {
		t.Fatalf("commit at %s: %q", ref, got)
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState); got != c.Hash {
		t.Fatalf("state at %s, want %s", got, c.Hash)
	}
	gitstatetest.Git(t, dir, "fsck", "--full", "--strict")

	for _, bad := range []string{gitstate.RefState, "refs/heads/main", "refs/codex/remotes/origin/x", "refs/codex/a..b", "refs/codex/x.lock", "refs/codex/a b", "refs/codex/", "refs/codex/.hidden"} {
		_, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(meta("bad"))
			return tx.CommitAt(bad, files, side)
		})
		if !errors.Is(err, gitstate.ErrInvalidPath) {
			t.Errorf("CommitAt(%q): %v, want ErrInvalidPath", bad, err)
		}
	}
	if strings.Contains(gitstatetest.Git(t, dir, "for-each-ref", "refs/heads"), "main") {
		t.Fatalf("refs/heads/main was written")
	}
}

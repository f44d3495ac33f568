package repo_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestPushBranch: a branch is published to origin without force; no
// origin means nothing to push; a remote branch that moved on is
// ErrPushRejected and keeps its commits; an unreachable remote is
// ErrRemote.
func TestPushBranch(t *testing.T) {
	ctx := context.Background()
	dir := gitstatetest.NewRepo(t)
	gitstatetest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
	gitstatetest.Git(t, dir, "branch", "feature")
	st := openRepo(t, dir)

	if pushed, err := st.PushBranch(ctx, "origin", "feature"); pushed || err != nil {
		t.Fatalf("no origin: pushed %v, err %v; want nothing pushed, no error", pushed, err)
	}

	bare := filepath.Join(t.TempDir(), "forge.git")
	gitstatetest.Git(t, dir, "init", "-q", "--bare", bare)
	gitstatetest.Git(t, dir, "remote", "add", "origin", bare)
	if pushed, err := st.PushBranch(ctx, "origin", "feature"); !pushed || err != nil {
		t.Fatalf("first push: pushed %v, err %v", pushed, err)
	}
	want := gitstatetest.Git(t, dir, "rev-parse", "feature")
	if got := gitstatetest.Git(t, bare, "rev-parse", "refs/heads/feature"); got != want {
		t.Fatalf("forge's feature = %s, want %s", got, want)
	}
	if pushed, err := st.PushBranch(ctx, "origin", "feature"); !pushed || err != nil {
		t.Fatalf("push again, nothing new: pushed %v, err %v", pushed, err)
	}

	// someone else's commit on the forge's branch: never overwritten
	other := filepath.Join(t.TempDir(), "other")
	gitstatetest.Git(t, dir, "clone", "-q", "-b", "feature", bare, other)
	gitstatetest.Git(t, other, "-c", "user.name=o", "-c", "user.email=o@example.com", "commit", "-q", "--allow-empty", "-m", "theirs")
	gitstatetest.Git(t, other, "push", "-q", "origin", "feature")
	theirs := gitstatetest.Git(t, other, "rev-parse", "HEAD")
	gitstatetest.Git(t, dir, "checkout", "-q", "feature")
	gitstatetest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "mine")
	if _, err := st.PushBranch(ctx, "origin", "feature"); !errors.Is(err, gitstate.ErrPushRejected) {
		t.Fatalf("diverged push: %v, want ErrPushRejected", err)
	}
	if got := gitstatetest.Git(t, bare, "rev-parse", "refs/heads/feature"); got != theirs {
		t.Fatalf("forge's feature = %s after a refused push, want theirs %s", got, theirs)
	}

	os.RemoveAll(bare)
	if _, err := st.PushBranch(ctx, "origin", "feature"); !errors.Is(err, gitstate.ErrRemote) {
		t.Fatalf("unreachable remote: %v, want ErrRemote", err)
	}
	if _, err := st.PushBranch(ctx, "origin", "no-such-branch"); !errors.Is(err, gitstate.ErrNotFound) {
		t.Fatalf("missing branch: %v, want ErrNotFound", err)
	}
}

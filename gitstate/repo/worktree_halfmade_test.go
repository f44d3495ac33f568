package repo_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestRemoveWorktreeKilledBeforeItsGitdir: `git worktree add` killed right
// after it locked its admin directory "initializing" and before it wrote
// the gitdir file leaves a directory git neither unlocks (it cannot find
// it from the path) nor prunes (it is locked). RemoveWorktree removes
// that lock, so git prunes it, and the next worktree of that name works.
func TestRemoveWorktreeKilledBeforeItsGitdir(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	gitstatetest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
	s := openRepo(t, dir)
	path := filepath.Join(t.TempDir(), "c6")
	admin := filepath.Join(dir, ".git", "worktrees", "c6")
	if err := os.MkdirAll(admin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(admin, "locked"), []byte("initializing"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.RemoveWorktree(ctx, path); err != nil {
		t.Fatalf("remove: %v", err)
	}
	if _, err := os.Stat(admin); err == nil {
		t.Fatalf("the half-made admin directory is still there")
	}
	if err := s.AddWorktree(ctx, path, "codex/c6", "HEAD"); err != nil {
		t.Fatalf("a new worktree of that name: %v", err)
	}
	if out, err := gitstatetest.GitErr(dir, "worktree", "list"); err != nil {
		t.Fatalf("git worktree list: %v\n%s", err, out)
	}
}

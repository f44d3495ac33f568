package repo_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/gitstate/repo"
)

// TestWorktreeLifecycle: a worktree on a new branch; the work in it (an
// uncommitted edit, an untracked file, a commit no other ref has) is
// reported, rescued under refs/codex/rescue without touching the
// worktree, and survives the worktree's and the branch's removal.
func TestWorktreeLifecycle(t *testing.T) {
	ctx := context.Background()
	dir := gitstatetest.NewRepo(t)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	gitstatetest.Git(t, dir, "add", "a.txt")
	gitstatetest.Git(t, dir, "commit", "-qm", "base")
	s := openRepo(t, dir)
	wt := filepath.Join(t.TempDir(), "wt", "coder")
	if err := s.AddWorktree(ctx, wt, "codex/coder", "HEAD"); err != nil {
		t.Fatal(err)
	}
	if err := s.AddWorktree(ctx, wt+"2", "codex/coder", "HEAD"); !errors.Is(err, repo.ErrBranchExists) {
		t.Fatalf("second worktree on the same branch: %v, want ErrBranchExists", err)
	}
	if _, err := os.Stat(wt + "2"); !os.IsNotExist(err) {
		t.Errorf("the refused worktree was made")
	}
	w, err := s.WorkIn(ctx, wt, "codex/coder")
	if err != nil || !w.Exists || w.Lost() {
		t.Fatalf("fresh worktree: %+v, %v", w, err)
	}
	os.WriteFile(filepath.Join(wt, "a.txt"), []byte("committed\n"), 0o644)
	gitstatetest.Git(t, wt, "commit", "-qam", "work")
	os.WriteFile(filepath.Join(wt, "a.txt"), []byte("uncommitted\n"), 0o644)
	os.WriteFile(filepath.Join(wt, "new.txt"), []byte("untracked\n"), 0o644)
	w, err = s.WorkIn(ctx, wt, "codex/coder")
	if err != nil || len(w.Dirty) != 2 || len(w.Unmerged) != 1 {
		t.Fatalf("worktree with work: %+v, %v", w, err)
	}
	refs, err := s.Rescue(ctx, "coder", wt, "codex/coder")
	if err != nil || len(refs) != 2 {
		t.Fatalf("rescue: %v, %v", refs, err)
	}
	if got := gitstatetest.Git(t, wt, "status", "--porcelain"); got != "M a.txt\n?? new.txt" && got != " M a.txt\n?? new.txt" {
		t.Errorf("rescue touched the worktree: status %q", got)
	}
	if err := s.RemoveWorktree(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBranch(ctx, "codex/coder"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Errorf("worktree still there")
	}
	if got := gitstatetest.Git(t, dir, "worktree", "list"); strings.Contains(got, "coder") {
		t.Errorf("git still lists the worktree: %s", got)
	}
	if got := gitstatetest.Git(t, dir, "show", repo.RefRescue+"/coder/worktree:a.txt"); got != "uncommitted" {
		t.Errorf("rescued a.txt = %q", got)
	}
	if got := gitstatetest.Git(t, dir, "show", repo.RefRescue+"/coder/worktree:new.txt"); got != "untracked" {
		t.Errorf("rescued new.txt = %q", got)
	}
	if got := gitstatetest.Git(t, dir, "show", repo.RefRescue+"/coder/branch:a.txt"); got != "committed" {
		t.Errorf("rescued branch a.txt = %q", got)
	}
	// a worktree deleted by hand is forgotten by RemoveWorktree too
	wt2 := filepath.Join(t.TempDir(), "gone")
	if err := s.AddWorktree(ctx, wt2, "codex/gone", "HEAD"); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(wt2)
	if w, err := s.WorkIn(ctx, wt2, "codex/gone"); err != nil || w.Exists || w.Lost() {
		t.Fatalf("deleted worktree: %+v, %v", w, err)
	}
	if err := s.RemoveWorktree(ctx, wt2); err != nil {
		t.Fatal(err)
	}
	if got := gitstatetest.Git(t, dir, "worktree", "list", "--porcelain"); strings.Contains(got, "gone") {
		t.Errorf("git still lists the deleted worktree: %s", got)
	}
}

// TestRemoveOwnWorktree: a store opened in a linked worktree (a reviewer's
// own `git codex call`, whose process runs there) removes that worktree,
// and git commands after it (prune, deleting its branch) still run,
// though the directory they were started from is gone.
func TestRemoveOwnWorktree(t *testing.T) {
	ctx := context.Background()
	dir := gitstatetest.NewRepo(t)
	gitstatetest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
	main := openRepo(t, dir)
	wt := filepath.Join(t.TempDir(), "review")
	if err := main.AddWorktree(ctx, wt, "codex/review", "HEAD"); err != nil {
		t.Fatal(err)
	}
	s := openRepo(t, wt)
	if err := s.RemoveWorktree(ctx, wt); err != nil {
		t.Fatalf("remove the store's own worktree: %v", err)
	}
	if err := s.DeleteBranch(ctx, "codex/review"); err != nil {
		t.Fatalf("delete its branch after: %v", err)
	}
	if s.BranchExists(ctx, "codex/review") {
		t.Errorf("codex/review is still there")
	}
	if got := gitstatetest.Git(t, dir, "worktree", "list", "--porcelain"); strings.Contains(got, wt) {
		t.Errorf("git still lists the worktree:\n%s", got)
	}
}

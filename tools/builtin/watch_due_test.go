package builtin_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gitcodex/git-codex/tools/instance"
)

// TestWorktreeHere: a worktree is this repository's when its .git names
// this repository's worktrees; another clone's is not, also when this
// clone has no worktrees of its own (it once was: the missing directory
// read as "here", and a second clone delivered another's GitHub reviews);
// a worktree that is gone belongs to nobody else.
func TestWorktreeHere(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Env = append(cmd.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	git("init", "-q", a)
	git("-C", a, "commit", "-q", "--allow-empty", "-m", "x")
	git("clone", "-q", a, b)
	wt := filepath.Join(dir, "wt")
	git("-C", a, "worktree", "add", "-q", "-b", "w", wt)
	if !instance.WorktreeHere(wt, filepath.Join(a, ".git")) {
		t.Error("a's worktree is not a's")
	}
	if instance.WorktreeHere(wt, filepath.Join(b, ".git")) {
		t.Error("a's worktree is b's, which has no worktrees")
	}
	other := filepath.Join(dir, "wt2")
	git("-C", b, "worktree", "add", "-q", "-b", "w2", other)
	if instance.WorktreeHere(wt, filepath.Join(b, ".git")) || instance.WorktreeHere(other, filepath.Join(a, ".git")) {
		t.Error("a worktree is both clones'")
	}
	if !instance.WorktreeHere(filepath.Join(dir, "gone"), filepath.Join(b, ".git")) || !instance.WorktreeHere("", filepath.Join(b, ".git")) {
		t.Error("a worktree that is gone is another's")
	}
}

package repo_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// loseFanOutRaces puts a git in front of the real one that fails the
// first run of each of cmds as git does when `git repack -d` (the store's
// background repack, git gc) removes the empty fan-out directory it has
// just made for a loose object ("unable to create temporary file: No such
// file or directory"; TestScripts/github_reviews failed so in CI). The
// returned check says which of cmds were never failed.
func loseFanOutRaces(t *testing.T, cmds ...string) (check func()) {
	t.Helper()
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin, marks := t.TempDir(), t.TempDir()
	wrapper := `#!/bin/sh
for a; do
	case " $P99_FAIL " in *" $a "*)
		if [ ! -e "$P99_MARKS/$a" ]; then
			: >"$P99_MARKS/$a"
			echo "error: unable to create temporary file: No such file or directory" >&2
			echo "fatal: failed to write object" >&2
			exit 128
		fi
	esac
done
exec "$P99_REAL_GIT" "$@"
`
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("P99_REAL_GIT", realGit)
	t.Setenv("P99_MARKS", marks)
	t.Setenv("P99_FAIL", strings.Join(cmds, " "))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() {
		t.Helper()
		for _, cmd := range cmds {
			if _, err := os.Stat(filepath.Join(marks, cmd)); err != nil {
				t.Errorf("the wrapper never failed %s: %v", cmd, err)
			}
		}
	}
}

// TestCommitFileSurvivesALostFanOutRace: with the first hash-object and
// the first commit-tree failed as git fails them when it loses that race,
// the feedback file is committed all the same, once, and git reads it.
func TestCommitFileSurvivesALostFanOutRace(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	gitstatetest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "start")
	head := gitstatetest.Git(t, dir, "rev-parse", "HEAD")
	r := openRepo(t, dir)
	check := loseFanOutRaces(t, "hash-object", "commit-tree")

	commit, err := r.CommitFile(context.Background(), dir, "main", "REVIEW_FEEDBACK.md", []byte("Fix the tests.\n"), "Review feedback", gitstate.Signature{})
	if err != nil {
		t.Fatalf("CommitFile after a lost race: %v", err)
	}
	check()
	if got := gitstatetest.Git(t, dir, "rev-parse", "main"); got != commit {
		t.Fatalf("main at %s, want the feedback commit %s", got, commit)
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", "main^"); got != head {
		t.Errorf("the feedback commit's parent is %s, want %s", got, head)
	}
	if got := gitstatetest.Git(t, dir, "show", "main:REVIEW_FEEDBACK.md"); strings.TrimSpace(got) != "Fix the tests." {
		t.Errorf("the committed feedback: %q", got)
	}
}

// TestRemoveFileSurvivesALostFanOutRace: the same for RemoveFile (the
// feedback file dropped before a pull request), whose write-tree and
// commit-tree write loose objects: the file is removed in one commit on
// the old head, and the worktree's copy goes with it.
func TestRemoveFileSurvivesALostFanOutRace(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	os.WriteFile(filepath.Join(dir, "work.txt"), []byte("the work\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "REVIEW_FEEDBACK.md"), []byte("Fix the tests.\n"), 0o644)
	gitstatetest.Git(t, dir, "add", ".")
	gitstatetest.Git(t, dir, "commit", "-q", "-m", "work and its feedback")
	head := gitstatetest.Git(t, dir, "rev-parse", "HEAD")
	r := openRepo(t, dir)
	check := loseFanOutRaces(t, "write-tree", "commit-tree")

	commit, err := r.RemoveFile(context.Background(), "main", "REVIEW_FEEDBACK.md", "Remove the feedback", gitstate.Signature{Name: "alice", Email: "alice@example.com"})
	if err != nil || commit == "" {
		t.Fatalf("RemoveFile after a lost race: %q, %v", commit, err)
	}
	check()
	if got := gitstatetest.Git(t, dir, "rev-parse", "main"); got != commit {
		t.Fatalf("main at %s, want the removal %s", got, commit)
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", "main^"); got != head {
		t.Errorf("the removal's parent is %s, want %s", got, head)
	}
	if got := gitstatetest.Git(t, dir, "ls-tree", "--name-only", "main"); got != "work.txt" {
		t.Errorf("main's tree holds %q, want only work.txt", got)
	}
	if got := gitstatetest.Git(t, dir, "log", "-1", "--format=%an <%ae> / %cn", "main"); got != "alice <alice@example.com> / git codex" {
		t.Errorf("the removal's author / committer: %q", got)
	}
	if got := gitstatetest.Git(t, dir, "status", "--porcelain"); got != "" {
		t.Errorf("the worktree after the removal: %q, want clean", got)
	}
}

// TestRescueSurvivesALostFanOutRace: the same for the rescue of a
// worktree's uncommitted work before cleanup removes it, whose snapshot
// writes blobs (add into a temporary index), a tree and a commit: the
// work is saved all the same, and the worktree is left as it was.
func TestRescueSurvivesALostFanOutRace(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	gitstatetest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "start")
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("unsaved work\n"), 0o644)
	r := openRepo(t, dir)
	check := loseFanOutRaces(t, "add", "write-tree", "commit-tree")

	refs, err := r.Rescue(context.Background(), "coder", dir, "main")
	if err != nil || !slices.Contains(refs, "refs/codex/rescue/coder/worktree") {
		t.Fatalf("Rescue after lost races: %q, %v", refs, err)
	}
	check()
	if got := gitstatetest.Git(t, dir, "show", "refs/codex/rescue/coder/worktree:notes.txt"); got != "unsaved work" {
		t.Errorf("the rescued notes.txt: %q", got)
	}
	if got := gitstatetest.Git(t, dir, "status", "--porcelain"); got != "?? notes.txt" {
		t.Errorf("the worktree after the rescue: %q, want it as it was", got)
	}
}

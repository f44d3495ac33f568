package repo_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestCommitFileSurvivesALostFanOutRace: git's commit-tree fails when
// `git repack -d` (the store's background repack, git gc) removes the
// empty fan-out directory it has just made for the commit's loose object
// ("unable to create temporary file: No such file or directory";
// TestScripts/github_reviews failed so in CI). A git in front of the real
// one fails the first commit-tree and the first hash-object just so; the
// feedback file is committed all the same, once, and git reads it.
func TestCommitFileSurvivesALostFanOutRace(t *testing.T) {
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := gitstatetest.NewRepo(t)
	gitstatetest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "start")
	head := gitstatetest.Git(t, dir, "rev-parse", "HEAD")
	r := openRepo(t, dir)

	bin, marks := t.TempDir(), t.TempDir()
	wrapper := `#!/bin/sh
for a; do
	case $a in hash-object | commit-tree)
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
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	commit, err := r.CommitFile(context.Background(), dir, "main", "REVIEW_FEEDBACK.md", []byte("Fix the tests.\n"), "Review feedback", gitstate.Signature{})
	if err != nil {
		t.Fatalf("CommitFile after a lost race: %v", err)
	}
	for _, cmd := range []string{"hash-object", "commit-tree"} {
		if _, err := os.Stat(filepath.Join(marks, cmd)); err != nil {
			t.Errorf("the wrapper never failed %s: %v", cmd, err)
		}
	}
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

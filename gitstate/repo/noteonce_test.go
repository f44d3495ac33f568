package repo_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestAppendNoteOnceFannedOut: in a notes tree git fanned out (notes at
// ab/cdef...), a note is found where it is (its marker: nothing
// appended; else appended there, as git notes append joins), and a new
// note goes at the fan-out the tree has; git reads every one of them and
// fsck finds nothing wrong. With no notes yet, the ref is made.
func TestAppendNoteOnceFannedOut(t *testing.T) {
	ctx := context.Background()
	dir := gitstatetest.NewRepo(t)
	var commits []string
	for _, m := range []string{"a", "b", "c"} {
		gitstatetest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", m)
		commits = append(commits, strings.TrimSpace(gitstatetest.Git(t, dir, "rev-parse", "HEAD")))
	}
	r := openRepo(t, dir)
	const ref = "refs/notes/test"

	if added, err := r.AppendNoteOnce(ctx, ref, commits[0], "first\n\n\nsecond  \n", "first"); err != nil || !added {
		t.Fatalf("first note: %v, %v", added, err)
	}
	if got := gitstatetest.Git(t, dir, "notes", "--ref", ref, "show", commits[0]); got != "first\n\nsecond\n" && got != "first\n\nsecond" {
		t.Fatalf("first note %q", got)
	}

	// a fanned-out tree: commit 0's note at ab/..., and a note under the
	// directory of commit 2's first two digits
	index := filepath.Join(t.TempDir(), "index")
	blob := gitstatetest.WriteObject(t, dir, "blob", []byte("old\n"))
	other := commits[2][:2] + strings.Repeat("0", len(commits[2])-2)
	if other == commits[2] {
		other = commits[2][:2] + strings.Repeat("1", len(commits[2])-2)
	}
	for _, c := range []string{commits[0], other} {
		cmd := "100644," + blob + "," + c[:2] + "/" + c[2:]
		gitIndex(t, dir, index, "update-index", "--add", "--cacheinfo", cmd)
	}
	tree := strings.TrimSpace(gitIndex(t, dir, index, "write-tree"))
	tip := gitstatetest.CommitTree(t, dir, tree, "fanned")
	gitstatetest.Git(t, dir, "update-ref", ref, tip)

	if added, err := r.AppendNoteOnce(ctx, ref, commits[0], "old", "old\n"); err != nil || added {
		t.Fatalf("a note holding the marker: %v, %v", added, err)
	}
	for i, c := range []string{commits[0], commits[2], commits[1]} {
		if added, err := r.AppendNoteOnce(ctx, ref, c, "new", "new"); err != nil || !added {
			t.Fatalf("note %d: %v, %v", i, added, err)
		}
	}
	for c, want := range map[string]string{commits[0]: "old\n\nnew", commits[2]: "new", commits[1]: "new"} {
		if got := strings.TrimSpace(gitstatetest.Git(t, dir, "notes", "--ref", ref, "show", c)); got != want {
			t.Errorf("note of %s: %q, want %q", c, got, want)
		}
	}
	paths := strings.Fields(gitstatetest.Git(t, dir, "ls-tree", "-r", "--name-only", ref))
	for _, want := range []string{commits[0][:2] + "/" + commits[0][2:], commits[2][:2] + "/" + commits[2][2:]} {
		if !slices.Contains(paths, want) {
			t.Errorf("no note at %s:\n%s", want, paths)
		}
	}
	if len(paths) != 4 {
		t.Errorf("notes tree:\n%s", paths)
	}
	gitstatetest.Git(t, dir, "fsck", "--no-progress")
	if log := gitstatetest.Git(t, dir, "log", "--format=%s", ref); !strings.HasPrefix(log, "Notes added by 'git notes append'\n") {
		t.Errorf("notes log:\n%s", log)
	}
}

// gitIndex runs git in dir with index as its index file.
func gitIndex(t *testing.T, dir, index string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "GIT_INDEX_FILE="+index)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", args[0], err)
	}
	return string(out)
}

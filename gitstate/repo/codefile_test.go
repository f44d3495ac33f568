package repo_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/gitstate/repo"
)

// TestReadFileAtAndCreateBranch: a regular file as committed on a branch
// is read; a symbolic link, a directory and a missing path are not
// (a link's target is never followed); a branch is made once.
func TestReadFileAtAndCreateBranch(t *testing.T) {
	ctx := context.Background()
	dir := gitstatetest.NewRepo(t)
	os.MkdirAll(filepath.Join(dir, "src"), 0o755)
	os.WriteFile(filepath.Join(dir, "src", "a.go"), []byte("package a\n"), 0o644)
	os.Symlink("/etc/passwd", filepath.Join(dir, "leak"))
	gitstatetest.Git(t, dir, "add", ".")
	gitstatetest.Git(t, dir, "commit", "-qm", "files")
	st := openRepo(t, dir)

	made, err := st.CreateBranch(ctx, "epic/x", "HEAD")
	if err != nil || !made {
		t.Fatalf("CreateBranch = %v, %v", made, err)
	}
	if made, err := st.CreateBranch(ctx, "epic/x", "HEAD"); err != nil || made {
		t.Errorf("CreateBranch of an existing branch = %v, %v; want false, nil", made, err)
	}
	if _, err := st.CreateBranch(ctx, "epic/y", "no-such-rev"); err == nil {
		t.Errorf("CreateBranch from a revision that names nothing succeeded")
	}
	data, err := st.ReadFileAt(ctx, "refs/heads/epic/x", "src/a.go")
	if err != nil || string(data) != "package a\n" {
		t.Fatalf("ReadFileAt = %q, %v", data, err)
	}
	for path, want := range map[string]error{
		"leak":     repo.ErrNotRegularFile,
		"src":      repo.ErrNotRegularFile,
		"missing":  gitstate.ErrNotFound,
		"src/b.go": gitstate.ErrNotFound,
	} {
		if _, err := st.ReadFileAt(ctx, "refs/heads/epic/x", path); !errors.Is(err, want) {
			t.Errorf("ReadFileAt(%s) = %v, want %v", path, err, want)
		}
	}
	if _, err := st.ReadFileAt(ctx, "refs/heads/nope", "src/a.go"); !errors.Is(err, gitstate.ErrNotFound) {
		t.Errorf("ReadFileAt on a missing branch = %v", err)
	}
}

package repo

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/gitcodex/git-codex/gitstate"
)

// Files and branches of the code repository that epics read and make
// (epic_read_file, epic_create): git CLI work outside any transaction.

// ErrNotRegularFile is returned by ReadFileAt for a path that is a
// symbolic link, a directory or a submodule at that revision.
var ErrNotRegularFile = fmt.Errorf("not a regular file")

// ReadFileAt reads the regular file at path in revision rev (a branch, a
// commit). A missing path is gitstate.ErrNotFound; a symbolic link, directory or
// submodule is ErrNotRegularFile (a link's target is never followed).
func (r *Repo) ReadFileAt(ctx context.Context, rev, path string) ([]byte, error) {
	var ls bytes.Buffer
	if err := r.git(ctx, &ls, "ls-tree", "-z", rev+"^{commit}", "--", path); err != nil {
		return nil, fmt.Errorf("repo: %q names no commit: %w", rev, gitstate.ErrNotFound)
	}
	entry := strings.TrimSuffix(ls.String(), "\x00")
	if entry == "" {
		return nil, fmt.Errorf("repo: %s:%s: %w", rev, path, gitstate.ErrNotFound)
	}
	meta, name, _ := strings.Cut(entry, "\t")
	fields := strings.Fields(meta)
	if name != path || len(fields) != 3 {
		return nil, fmt.Errorf("repo: %s:%s: %w", rev, path, gitstate.ErrNotFound)
	}
	if fields[0] != "100644" && fields[0] != "100755" {
		return nil, fmt.Errorf("repo: %s:%s (mode %s): %w", rev, path, fields[0], ErrNotRegularFile)
	}
	var out bytes.Buffer
	if err := r.git(ctx, &out, "cat-file", "blob", fields[2]); err != nil {
		return nil, fmt.Errorf("repo: read %s:%s: %w", rev, path, err)
	}
	return out.Bytes(), nil
}

// CreateBranch makes refs/heads/<branch> at from (any revision) unless it
// exists; made is false when it was there already.
func (r *Repo) CreateBranch(ctx context.Context, branch, from string) (made bool, err error) {
	if r.BranchExists(ctx, branch) {
		return false, nil
	}
	if err := r.git(ctx, nil, "branch", "--no-track", "--quiet", branch, from+"^{commit}"); err != nil {
		return false, fmt.Errorf("repo: create branch %s at %s: %w", branch, from, err)
	}
	return true, nil
}

package repo

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gitcodex/git-codex/gitstate"
)

// RemoveFile commits the removal of one file from a branch's head and
// moves the branch there (only if it has not moved meanwhile:
// ErrBranchMoved), the counterpart of CommitFile. In the worktree that has
// the branch checked out, the file's index entry and working copy go too,
// each only while it still holds what the old head did: a change of the
// worktree's own stays, and nothing else of the worktree is touched. The
// commit is built through a temporary index, its objects written as
// CommitFile's are (again when git's maintenance removed a fan-out
// directory under the write). It returns the new commit, or "" when the
// branch, or the file on it, is not there.
func (r *Repo) RemoveFile(ctx context.Context, branch, file, message string, author gitstate.Signature) (string, error) {
	ref := "refs/heads/" + branch
	head, err := r.RevParse(ctx, ref)
	if err != nil {
		return "", nil
	}
	blob, err := r.gitIn(ctx, "", "", nil, "rev-parse", "--verify", "--quiet", head+":"+file)
	if err != nil {
		return "", nil
	}
	index, err := os.CreateTemp("", "codex-index-*")
	if err != nil {
		return "", err
	}
	index.Close()
	defer os.Remove(index.Name())
	if _, err := r.gitIn(ctx, "", index.Name(), nil, "read-tree", head); err != nil {
		return "", err
	}
	if _, err := r.gitIn(ctx, "", index.Name(), nil, "update-index", "--force-remove", "--", file); err != nil {
		return "", err
	}
	tree, err := r.gitIn(ctx, "", index.Name(), nil, "write-tree")
	if err != nil {
		return "", err
	}
	env := []string{"GIT_AUTHOR_NAME=" + author.Name, "GIT_AUTHOR_EMAIL=" + author.Email,
		"GIT_COMMITTER_NAME=" + r.committer.Name, "GIT_COMMITTER_EMAIL=" + r.committer.Email}
	commit, err := r.gitEnvIn(ctx, "", env, nil, "commit-tree", tree, "-p", head, "-m", message)
	if err != nil {
		return "", err
	}
	if _, err := r.gitIn(ctx, "", "", nil, "update-ref", "-m", "git codex: "+firstLine(message), ref, commit, head); err != nil {
		return "", fmt.Errorf("repo: %s: %w (%v)", branch, ErrBranchMoved, err)
	}
	wt := r.worktreeWith(ctx, ref)
	if wt == "" {
		return commit, nil
	}
	content, _ := r.gitIn(ctx, "", "", nil, "cat-file", "blob", blob)
	if entry, err := r.gitIn(ctx, wt, "", nil, "ls-files", "--stage", "--", file); err == nil && strings.Contains(entry, " "+blob+" ") {
		if _, err := r.gitIn(ctx, wt, "", nil, "update-index", "--force-remove", "--", file); err != nil {
			return commit, err
		}
	}
	path := filepath.Join(wt, file)
	if cur, err := os.ReadFile(path); err == nil && string(bytes.TrimSpace(cur)) == content {
		if err := os.Remove(path); err != nil {
			return commit, fmt.Errorf("repo: remove %s: %w", path, err)
		}
	}
	return commit, nil
}

// worktreeWith is the worktree that has ref checked out, or "".
func (r *Repo) worktreeWith(ctx context.Context, ref string) string {
	out, err := r.gitIn(ctx, "", "", nil, "worktree", "list", "--porcelain")
	if err != nil {
		return ""
	}
	dir := ""
	for _, line := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok {
			dir = p
		}
		if line == "branch "+ref {
			return dir
		}
	}
	return ""
}

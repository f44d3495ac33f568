package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/internal/gitcli"
)

// RefReviewNotes is where review feedback is attached to the commits it
// reviewed: `git log --notes=codex-reviews` shows it.
const RefReviewNotes = "refs/notes/codex-reviews"

// ErrBranchMoved is returned by CommitFile when the branch moved while the
// commit was made: nothing was changed, and the caller may try again.
var ErrBranchMoved = errors.New("branch moved meanwhile")

// CommitFile commits one file on top of a worktree's branch and moves the
// branch there (only if it has not moved meanwhile), then brings that one
// path of the worktree up to date: its index entry, and its working file
// unless the worktree's copy has changes of its own. Every other path of
// the worktree's index and files is left exactly as it was, so whatever
// the worktree's owner had not committed is untouched. The commit is built
// through a temporary index; it returns the new commit.
func (r *Repo) CommitFile(ctx context.Context, worktree, branch, file string, content []byte, message string, author gitstate.Signature) (string, error) {
	ref := "refs/heads/" + branch
	head, err := r.RevParse(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("repo: commit %s on %s: %w", file, branch, err)
	}
	blob, err := r.gitIn(ctx, worktree, "", bytes.NewReader(content), "hash-object", "-w", "--stdin")
	if err != nil {
		return "", err
	}
	index, err := os.CreateTemp("", "codex-index-*")
	if err != nil {
		return "", err
	}
	index.Close()
	defer os.Remove(index.Name())
	if _, err := r.gitIn(ctx, worktree, index.Name(), nil, "read-tree", head); err != nil {
		return "", err
	}
	if _, err := r.gitIn(ctx, worktree, index.Name(), nil, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+file); err != nil {
		return "", err
	}
	tree, err := r.gitIn(ctx, worktree, index.Name(), nil, "write-tree")
	if err != nil {
		return "", err
	}
	var env []string
	if author.Name != "" {
		env = []string{"GIT_AUTHOR_NAME=" + author.Name, "GIT_AUTHOR_EMAIL=" + author.Email,
			"GIT_COMMITTER_NAME=" + r.committer.Name, "GIT_COMMITTER_EMAIL=" + r.committer.Email}
	}
	commit, err := r.gitEnvIn(ctx, worktree, env, nil, "commit-tree", tree, "-p", head, "-m", message)
	if err != nil {
		return "", err
	}
	// what the worktree's copy was before: the old head's, or none
	old, oldErr := r.gitIn(ctx, worktree, "", nil, "cat-file", "blob", head+":"+file)
	if _, err := r.gitIn(ctx, worktree, "", nil, "update-ref", "-m", "git codex: "+firstLine(message), ref, commit, head); err != nil {
		return "", fmt.Errorf("repo: %s: %w (%v)", branch, ErrBranchMoved, err)
	}
	path := filepath.Join(worktree, file)
	cur, curErr := os.ReadFile(path)
	unchanged := (oldErr != nil && os.IsNotExist(curErr)) || (oldErr == nil && curErr == nil && strings.TrimSpace(string(cur)) == old)
	if unchanged {
		if err := os.WriteFile(path, content, 0o644); err != nil {
			return commit, fmt.Errorf("repo: write %s: %w", path, err)
		}
		if _, err := r.gitIn(ctx, worktree, "", nil, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+file); err != nil {
			return commit, err
		}
	}
	return commit, nil
}

// DiffStat is `git diff --stat base head`: what a review looks at.
func (r *Repo) DiffStat(ctx context.Context, base, head string) (string, error) {
	return r.gitIn(ctx, "", "", nil, "diff", "--stat", base, head)
}

// gitIn runs git in a worktree (or the common dir when worktree is ""),
// with a temporary index if one is given, and returns its trimmed stdout.
func (r *Repo) gitIn(ctx context.Context, worktree, index string, stdin io.Reader, args ...string) (string, error) {
	var env []string
	if index != "" {
		env = []string{"GIT_INDEX_FILE=" + index}
	}
	return r.gitEnvIn(ctx, worktree, env, stdin, args...)
}

// gitEnvIn runs git in worktree (the repository's git directory when "")
// with env added and stdin as its input, and returns its trimmed output.
// A command that writes loose objects (hash-object -w, write-tree,
// commit-tree, and add into a temporary index: the rescue's snapshot) is
// run again, up to four times, when it lost its race with git's own
// maintenance (gitcli.LostFanOutRace): the objects are named by their
// content, so writing them again is the same write.
func (r *Repo) gitEnvIn(ctx context.Context, worktree string, env []string, stdin io.Reader, args ...string) (string, error) {
	var input []byte
	if stdin != nil {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return "", err
		}
		input = b
	}
	pre := []string{"--git-dir", r.gitDir}
	if worktree != "" {
		pre = []string{"-C", worktree}
	}
	writesObjects := args[0] == "hash-object" || args[0] == "write-tree" || args[0] == "commit-tree" ||
		(args[0] == "add" && slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, "GIT_INDEX_FILE=") }))
	for attempt := 1; ; attempt++ {
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, "git", append(pre, args...)...)
		cmd.Env = append(gitcli.Env(), env...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if stdin != nil {
			cmd.Stdin = bytes.NewReader(input)
		}
		err := cmd.Run()
		if err == nil {
			return strings.TrimSpace(stdout.String()), nil
		}
		if writesObjects && attempt < 5 && ctx.Err() == nil && gitcli.LostFanOutRace(stderr.String()) {
			continue
		}
		return "", fmt.Errorf("repo: git %s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

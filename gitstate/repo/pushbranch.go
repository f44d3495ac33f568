package repo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/internal/gitcli"
)

// pushTimeout bounds one branch push: a remote that never answers must not
// hold an after-step (and its caller) forever.
const pushTimeout = 2 * time.Minute

// PushBranch publishes refs/heads/<branch> to remote, as `gh pr create`
// does before it opens a pull request: a pull request names a branch the
// forge must already have. It never forces: a remote branch that has
// moved on is gitstate.ErrPushRejected, and the caller's work is left as it is.
// A repository without that remote has nothing to push to; pushed is false
// and err nil (the forge is named by GH_REPO alone, and the branch is the
// caller's to publish).
func (r *Repo) PushBranch(ctx context.Context, remote, branch string) (pushed bool, err error) {
	if !r.BranchExists(ctx, branch) {
		return false, fmt.Errorf("repo: push %s: no such branch: %w", branch, gitstate.ErrNotFound)
	}
	if err := r.git(ctx, nil, "remote", "get-url", "--push", remote); err != nil {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, pushTimeout)
	defer cancel()
	ref := "refs/heads/" + branch
	var out strings.Builder
	err = r.git(ctx, &out, "push", "--porcelain", "--quiet", remote, ref+":"+ref)
	if err == nil {
		return true, nil
	}
	if strings.Contains(out.String(), "[rejected]") || strings.Contains(out.String(), "[remote rejected]") {
		return false, fmt.Errorf("repo: push %s to %s: %w: %s", branch, remote, gitstate.ErrPushRejected, pushSummary(out.String()))
	}
	var ge *gitcli.Error
	if errors.As(err, &ge) && ge.Stderr != "" {
		return false, fmt.Errorf("repo: push %s to %s: %w: %s", branch, remote, gitstate.ErrRemote, ge.Stderr)
	}
	return false, fmt.Errorf("repo: push %s to %s: %w: %v", branch, remote, gitstate.ErrRemote, err)
}

// pushSummary is the status lines of `git push --porcelain` (the refs and
// why they were refused).
func pushSummary(porcelain string) string {
	var lines []string
	for _, l := range strings.Split(porcelain, "\n") {
		if strings.HasPrefix(l, "!") {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	return strings.Join(lines, "; ")
}

package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gitcodex/git-codex/gitstate"
)

// publishRemote is the remote a pull request's branches are pushed to: the
// one the forge's repository is read from.
const publishRemote = "origin"

// publishBranches pushes the branches a pull request names to origin
// before GitHub is asked for it, as `gh pr create` does: GitHub refuses a
// pull request whose head it does not have. A push never forces. The
// failures come back as the forge's own: a remote that cannot be reached
// is transient (retried, then kept to `git codex github retry`); a remote
// branch that has moved on is refused, and says what to do.
func publishBranches(ctx context.Context, st *gitstate.Store, branches ...string) error {
	for _, b := range branches {
		if b == "" || !st.BranchExists(ctx, b) {
			continue // only on the forge (a default branch): nothing of ours to push
		}
		_, err := st.PushBranch(ctx, publishRemote, b)
		switch {
		case err == nil:
		case errors.Is(err, gitstate.ErrPushRejected):
			return &GitHubError{Status: 409, Message: fmt.Sprintf("%s on %s has commits your branch lacks; merge or rebase onto %s/%s, then try again (%v)",
				b, publishRemote, publishRemote, b, err)}
		default:
			return &GitHubError{Status: 0, Message: fmt.Sprintf("could not push %s to %s: %v", b, publishRemote, err)}
		}
	}
	return nil
}

// epicBase reports a base branch that git codex made (an epic's), which
// must be on the forge before a pull request can target it. A default
// branch is never pushed: local commits on it are the person's own.
func epicBase(base string) bool { return strings.HasPrefix(base, "epic/") }

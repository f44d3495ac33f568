package forge

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/repo"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/review"
)

// publishRemote is the remote a pull request's branches are pushed to: the
// one the forge's repository is read from.
const publishRemote = "origin"

// PublishBranches pushes the branches a pull request names to origin
// before GitHub is asked for it, as `gh pr create` does: GitHub refuses a
// pull request whose head it does not have. A push never forces. The
// failures come back as the forge's own: a remote that cannot be reached
// is transient (retried, then kept to `git codex github retry`); a remote
// branch that has moved on is refused, and says what to do.
func PublishBranches(ctx context.Context, st tools.CodeRepo, branches ...string) error {
	for _, b := range branches {
		if b == "" || !st.BranchExists(ctx, b) {
			continue // only on the forge (a default branch): nothing of ours to push
		}
		_, err := st.PushBranch(ctx, publishRemote, b)
		switch {
		case err == nil:
		case errors.Is(err, gitstate.ErrPushRejected):
			return &tools.GitHubError{Status: 409, Message: fmt.Sprintf("%s on %s has commits your branch lacks; merge or rebase onto %s/%s, then try again (%v)",
				b, publishRemote, publishRemote, b, err)}
		default:
			return &tools.GitHubError{Status: 0, Message: fmt.Sprintf("could not push %s to %s: %v", b, publishRemote, err)}
		}
	}
	return nil
}

// epicBase reports a base branch that git codex made (an epic's), which
// must be on the forge before a pull request can target it. A default
// branch is never pushed: local commits on it are the person's own.
func epicBase(base string) bool { return strings.HasPrefix(base, "epic/") }

// NothingToPropose says why branch head holds nothing for a pull request
// into base: every commit of it is on base already (the local branch, or
// origin's copy of it). GitHub refuses such a pull request ("No commits
// between"), so it is refused here, before anything is pushed. It is ""
// when head has commits base lacks, or when this repository knows
// neither head nor any copy of base (the forge will judge).
func NothingToPropose(ctx context.Context, gitDir, head, base string) string {
	if head == "" || base == "" || !refExists(ctx, gitDir, "refs/heads/"+head) {
		return ""
	}
	args := []string{"rev-list", "--count", "refs/heads/" + head}
	known := false
	for _, ref := range []string{"refs/heads/" + base, "refs/remotes/" + publishRemote + "/" + base} {
		if refExists(ctx, gitDir, ref) {
			args, known = append(args, "^"+ref), true
		}
	}
	if !known {
		return ""
	}
	out, err := gitOutput(ctx, gitDir, args...)
	if err != nil || out != "0" {
		return ""
	}
	return fmt.Sprintf("%s has no commits that %s lacks, so there is nothing for a pull request (GitHub refuses one: \"No commits between\"); commit your work on %s first", head, base, head)
}

// DefaultBase is the branch origin's HEAD names (the forge's default
// branch as last fetched), or "".
func DefaultBase(ctx context.Context, gitDir string) string {
	out, err := gitOutput(ctx, gitDir, "symbolic-ref", "--quiet", "refs/remotes/"+publishRemote+"/HEAD")
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(out, "refs/remotes/"+publishRemote+"/")
}

func refExists(ctx context.Context, gitDir, ref string) bool {
	_, err := gitOutput(ctx, gitDir, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	return err == nil
}

// gitOutput runs git on the repository's git directory and returns its
// trimmed output.
// (gitDir "": as args say, e.g. -C <worktree>).
func gitOutput(ctx context.Context, gitDir string, args ...string) (string, error) {
	if gitDir != "" {
		args = append([]string{"--git-dir", gitDir}, args...)
	}
	out, err := exec.CommandContext(ctx, "git", args...).Output()
	return strings.TrimSpace(string(out)), err
}

// dropScaffolding removes the review loop's REVIEW_FEEDBACK.md from branch
// head before its pull request is opened, in one commit on top of it: the
// pull request shows the work, and the reviews stay where they were put,
// in the branch's history and as notes on the reviewed commits
// (refs/notes/codex-reviews). A file of that name the base has too is the
// project's own and is left alone. In a worktree that has the branch
// checked out, the file's index entry and working copy go too unless they
// hold changes of their own; nothing else of the worktree is touched
// (repo.RemoveFile). It returns the new commit, or "" when there was
// nothing to remove.
func dropScaffolding(ctx context.Context, cr tools.CodeRepo, head, base, author string) (string, error) {
	if base != "" {
		for _, b := range []string{"refs/heads/" + base, "refs/remotes/" + publishRemote + "/" + base} {
			if _, err := cr.ReadFileAt(ctx, b, review.FeedbackFile); err == nil || errors.Is(err, repo.ErrNotRegularFile) {
				return "", nil // the project's own file
			}
		}
	}
	msg := "Remove " + review.FeedbackFile + " before the pull request\n\n" +
		"The pull request shows the work. The reviews stay in this branch's history\n" +
		"and as notes on the commits they reviewed (git log --notes=codex-reviews).\n"
	return cr.RemoveFile(ctx, head, review.FeedbackFile, msg, tools.AuthorOf(author))
}

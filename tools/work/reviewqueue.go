package work

import (
	"context"
	"errors"
	"time"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/forge"
	"github.com/gitcodex/git-codex/tools/mail"
)

// The review queue of an epic (seed 003): its tasks in REVIEW with their
// pull requests, oldest submission first. The supervisor approves one
// (its pull request is squash-merged into the epic's branch, the task is
// COMPLETED, and every worker with a pull request still pending on the
// epic is told to rebase) or requests changes (the feedback is mailed and
// kept as a comment, the task goes back to IN_PROGRESS). GitHub is called
// only after the call's commit (Call.After): the intent is the call's
// audit commit, the outcome one more commit; a failed call to GitHub
// leaves the task as it was, with the failure in the audit trail.

// reviewedTask reads a task the caller reviews in its epic: it must be in
// an epic the caller may run, and in REVIEW.
func reviewedTask(c *tools.Call, id, what string) (Task, Epic, error) {
	t, err := getTask(c.Tx, id)
	if err != nil {
		return Task{}, Epic{}, err
	}
	if t.EpicID == "" {
		return Task{}, Epic{}, tools.Errorf(tools.InvalidInput, "task %s belongs to no epic; %s works on an epic's tasks (task_update_status moves any task)", t.ID, what).With("task_id", t.ID)
	}
	e, err := getEpic(c.Tx, t.EpicID)
	if err != nil {
		return Task{}, Epic{}, err
	}
	if err := mayRunEpic(c, e, "review its tasks"); err != nil {
		return Task{}, Epic{}, err
	}
	if t.State != TaskReview {
		return Task{}, Epic{}, tools.Errorf(tools.InvalidInput, "task %s is %s, not in REVIEW; see the queue with `git codex epic queue`", t.ID, t.State).
			With("task_id", t.ID).With("state", t.State)
	}
	return t, e, nil
}

// withForge opens GitHub for an after-step (forge.OpenGitHub, with the
// settings in force) and runs op, trying again while it fails transiently
// (no answer, a server error, a rate limit) as GitHub calls do, by the
// same retry policy (retry.*: tries, waits doubling up to
// retry.max_delay_ms with jitter, no sooner than a rate limit's reset);
// each failed try is one audit commit on target. Its error is the last
// failure, coded (forgeError).
func withForge(ctx context.Context, f *tools.Followup, target string, op func(tools.GitHub) error) error {
	cfg, err := f.Config(ctx)
	if err != nil {
		return err
	}
	gh, ge := forge.OpenGitHub(ctx, f, cfg)
	if ge != nil {
		return forgeError(ge)
	}
	pol := tools.RetryPolicyOf(cfg)
	done := pol.Do(ctx, func(int) error { return op(gh) }, forge.Verdict, func(try int, err error, wait time.Duration) {
		ge := forge.AsGitHubError(err)
		tryErr := tools.Errorf(tools.TransientError, "try %d of %d failed: %s; trying again in %s", try, pol.Attempts, ge.Message, wait.Round(time.Millisecond)).
			With("attempt", try).With("status", ge.Status)
		_ = f.Record(ctx, func(c *tools.Call) error {
			c.Target(target)
			return tryErr
		})
	})
	switch {
	case done.Interrupted != nil:
		return forgeError(&tools.GitHubError{Message: "cancelled while waiting to try again: " + done.Interrupted.Error()})
	case done.GaveUp:
		return forgeError(done.Err).With("attempts", done.Tries)
	}
	return forgeErrorOrNil(done.Err)
}

// forgeErrorOrNil is forgeError for a failure, nil for none.
func forgeErrorOrNil(err error) error {
	if err == nil {
		return nil
	}
	return forgeError(err)
}

// forgeError gives a failed GitHub call its code: GITHUB_UNAVAILABLE when
// GitHub could not be reached (or no token or repository was found),
// TRANSIENT_ERROR for a server error or rate limit, GITHUB_REFUSED for any
// other refusal.
func forgeError(err error) *tools.Error {
	var te *tools.Error
	if errors.As(err, &te) {
		return te
	}
	var ge *tools.GitHubError
	if !errors.As(err, &ge) {
		return tools.Errorf(tools.GitHubUnavailable, "GitHub: %v; nothing changed, call again", err)
	}
	switch {
	case ge.Status == 0:
		return tools.Errorf(tools.GitHubUnavailable, "GitHub could not be reached: %s; nothing changed, call again once it can be", ge.Message)
	case ge.Transient():
		e := tools.Errorf(tools.TransientError, "GitHub answered %d: %s; nothing changed, call again later", ge.Status, ge.Message).With("status", ge.Status)
		if !ge.RetryAt.IsZero() {
			e = e.With("retry_at", ge.RetryAt.UTC().Format(time.RFC3339))
		}
		return e
	}
	return tools.Errorf(tools.GitHubRefused, "GitHub refused (%d): %s", ge.Status, ge.Message).With("status", ge.Status)
}

// recordForgeFailure puts a failed GitHub call in the audit trail (a
// commit with its Codex-Error that changes nothing) and returns it as the
// call's error.
func recordForgeFailure(ctx context.Context, f *tools.Followup, target string, err error) error {
	e := forgeError(err)
	if rerr := f.Record(ctx, func(c *tools.Call) error {
		c.Target(target)
		c.Summarize("%s: GitHub failed: %s", f.Caller.ID, mail.OneLineCut(e.Message))
		return e
	}); rerr != nil && tools.AsError(rerr).Code != e.Code {
		return rerr
	}
	return e
}

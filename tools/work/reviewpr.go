package work

import (
	"context"
	"fmt"
	"strings"

	"github.com/gitcodex/git-codex/gitstate/repo"
	"github.com/gitcodex/git-codex/tmux"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/forge"
	"github.com/gitcodex/git-codex/tools/instance"
	"github.com/gitcodex/git-codex/tools/review"
)

// A reviewer's create_pull_request (seed 000: review agents "create PRs
// for approved work (terminates review cycle)"). The work is the coder's,
// so the pull request is too: it is opened from the coder's branch (never
// the reviewer's fork, which cleanup deletes), recorded on the coder and
// the task it holds, and it approves the work and ends the review as an
// approved send_feedback does, without the feedback file: the verdict is
// a feedback record and a note on the reviewed commit. A reviewer may do
// this only for the work it is reviewing, and only while the coder's
// branch is still at the commit it reviewed (else it would propose work
// nobody reviewed: send feedback instead).

// reviewApproval is a reviewer's pull request in the making.
type reviewApproval struct {
	reviewer tools.Agent
	coder    tools.Agent
	rel      review.Relationship
	feedback review.Feedback
	tm       tmux.Runner // the agents' tmux server, as the call's config says
}

// approveForPR checks that the calling reviewer may open its coder's pull
// request.
func approveForPR(ctx context.Context, c *tools.Call) (reviewApproval, error) {
	r := c.Agent
	if r.Status != tools.StatusReviewing {
		return reviewApproval{}, tools.Errorf(tools.InvalidAgentState, "%s is %s, not REVIEWING: a reviewer opens a pull request only for the work it is reviewing", r.ID, r.Status).
			With("agent_id", r.ID).With("status", r.Status)
	}
	var active review.ActiveReview
	if err := c.Tx.Get(review.ActiveReviewPath(r.ReviewOf), &active); err != nil || active.Claim == nil || active.Claim.Holder != r.ID {
		return reviewApproval{}, tools.Errorf(tools.PermissionDenied, "%s is not the active reviewer of %s", r.ID, r.ReviewOf).With("agent_id", r.ID).With("coder", r.ReviewOf)
	}
	coder, err := tools.GetAgent(c.Tx, r.ReviewOf)
	if err != nil {
		return reviewApproval{}, err
	}
	var rel review.Relationship
	if err := c.Tx.Get(review.RelationshipPath(coder.ID, r.ID), &rel); err != nil {
		return reviewApproval{}, fmt.Errorf("the review's relationship: %w", err)
	}
	tip, err := c.Repo.RevParse(ctx, "refs/heads/"+coder.Branch)
	if err != nil {
		return reviewApproval{}, tools.Errorf(tools.InvalidAgentState, "%s's branch %s is gone; there is nothing to propose", coder.ID, coder.Branch).With("coder", coder.ID)
	}
	if tip != rel.ReviewedCommit {
		return reviewApproval{}, tools.Errorf(tools.InvalidAgentState, "%s's branch %s moved on since the commit you reviewed (%.12s, now %.12s): its pull request would hold work nobody reviewed; send your verdict with send_feedback instead",
			coder.ID, coder.Branch, rel.ReviewedCommit, tip).With("coder", coder.ID).With("reviewed_commit", rel.ReviewedCommit)
	}
	return reviewApproval{reviewer: *r, coder: coder, rel: rel}, nil
}

// end records the approval in the call's own commit: an approved feedback
// record, the reviewer TERMINATED, which frees the coder (ACTIVE).
func (a *reviewApproval) end(c *tools.Call, in CreatePullRequestIn) error {
	now := c.Tx.Now()
	a.feedback = review.Feedback{
		ID: c.Tx.NewID("f"), Reviewer: a.reviewer.ID, Coder: a.coder.ID, Iteration: a.rel.Iteration, Type: "approved",
		Text:           "Approved; a pull request was asked for from " + a.coder.Branch + ": " + in.Title + "\n\n" + in.Description,
		ReviewedCommit: a.rel.ReviewedCommit, Delivery: "delivered",
		CreatedAt: now, UpdatedAt: now, UpdatedBy: a.reviewer.ID, Clock: c.Tx.Clock(),
	}
	if err := c.Tx.Put(review.FeedbackPath(a.feedback.ID), a.feedback); err != nil {
		return err
	}
	a.tm = instance.Tmux(c.Config, c.Env)
	return instance.SetStatus(c, c.Agent, tools.StatusTerminated, fmt.Sprintf("it approved %s's %.12s and opened its pull request", a.coder.ID, a.rel.ReviewedCommit))
}

// finish, after the GitHub call: the verdict as a note on the reviewed
// commit, the reviewer removed, and the coder told.
func (a *reviewApproval) finish(ctx context.Context, f *tools.Followup, g forge.GitHubCall, err error) {
	_, _ = f.Repo.AppendNoteOnce(ctx, repo.RefReviewNotes, a.rel.ReviewedCommit, review.FeedbackMarkdown(a.feedback), "- feedback id: "+a.feedback.ID+"\n")
	tm := a.tm
	_, end := review.RemoveReviewer(ctx, f, tm, a.reviewer)
	end()
	msg := fmt.Sprintf("%s approved your work (%.12s) and asked GitHub for its pull request", a.reviewer.ID, a.rel.ReviewedCommit)
	switch {
	case err == nil && g.PR != nil:
		msg = fmt.Sprintf("%s approved your work (%.12s) and opened pull request #%d from your branch: %s", a.reviewer.ID, a.rel.ReviewedCommit, g.PR.Number, g.PR.URL)
	case err != nil:
		msg += ": " + strings.SplitN(tools.AsError(err).Message, "\n", 2)[0]
	}
	_, _ = instance.Nudge(ctx, tm, a.coder, msg)
}

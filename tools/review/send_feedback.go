package review

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/repo"
	"github.com/gitcodex/git-codex/tmux"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
)

// SendFeedbackIn is send_feedback's input.
type SendFeedbackIn struct {
	Feedback        string   `json:"feedback" jsonschema:"what is good, what must change and why"`
	FeedbackType    string   `json:"feedback_type" jsonschema:"needs_work, suggestions, clarification or approved"`
	Priority        string   `json:"priority,omitempty" jsonschema:"low, medium, high or critical"`
	ActionableItems []string `json:"actionable_items,omitempty"`
}

// FeedbackSent is what send_feedback returns.
type FeedbackSent struct {
	FeedbackID       string `json:"feedback_id"`
	GitCommitHash    string `json:"git_commit_hash" jsonschema:"the commit that added REVIEW_FEEDBACK.md to the coder's branch"`
	TargetInstanceID string `json:"target_instance_id"`
	CleanupStatus    string `json:"cleanup_status" jsonschema:"what became of the reviewer's session, worktree and branch"`
	CoderStatus      string `json:"coder_status"`
	Nudged           bool   `json:"nudged" jsonschema:"whether the coder's pane was told"`
}

// SendFeedback delivers a reviewer's verdict to the coder it reviews.
var SendFeedback = tools.Define("send_feedback", "review.send_feedback",
	"Send your review feedback to the coder you review: committed as REVIEW_FEEDBACK.md on its branch and noted on the reviewed commit; "+
		"the coder is ACTIVE again, you are TERMINATED. (To approve, create_pull_request.)",
	tools.CLI{Path: "review feedback", Args: []string{"feedback_type"}},
	func(ctx context.Context, c *tools.Call, in SendFeedbackIn) (*FeedbackSent, error) {
		r := c.Agent
		if r == nil || r.Type != tools.TypeReview || r.ReviewOf == "" {
			return nil, tools.Errorf(tools.PermissionDenied, "only review agents that git codex spawned for a coder send feedback").With("agent_type", string(c.Caller.Type))
		}
		if r.Status != tools.StatusReviewing {
			return nil, tools.Errorf(tools.InvalidAgentState, "%s is %s, not REVIEWING", r.ID, r.Status).With("agent_id", r.ID).With("status", r.Status)
		}
		if strings.TrimSpace(in.Feedback) == "" {
			return nil, tools.Errorf(tools.InvalidInput, "feedback must not be empty").With("field", "feedback")
		}
		if limit := c.Config.IntValue("mail.max_body_bytes"); len(in.Feedback) > limit {
			return nil, tools.Errorf(tools.InvalidInput, "feedback is %d bytes; the limit is %d (config mail.max_body_bytes)", len(in.Feedback), limit).With("field", "feedback")
		}
		if !slices.Contains(feedbackTypes, in.FeedbackType) {
			return nil, tools.Errorf(tools.InvalidInput, "feedback_type %q: use one of %s", in.FeedbackType, strings.Join(feedbackTypes, ", ")).With("field", "feedback_type")
		}
		if in.Priority != "" && !slices.Contains(priorities, in.Priority) {
			return nil, tools.Errorf(tools.InvalidInput, "priority %q: use one of %s", in.Priority, strings.Join(priorities, ", ")).With("field", "priority")
		}
		var active ActiveReview
		if err := c.Tx.Get(ActiveReviewPath(r.ReviewOf), &active); err != nil || active.Claim == nil || active.Claim.Holder != r.ID {
			return nil, tools.Errorf(tools.PermissionDenied, "%s is not the active reviewer of %s", r.ID, r.ReviewOf).With("agent_id", r.ID).With("coder", r.ReviewOf)
		}
		coder, err := tools.GetAgent(c.Tx, r.ReviewOf)
		if err != nil {
			return nil, err
		}
		var rel Relationship
		if err := c.Tx.Get(RelationshipPath(coder.ID, r.ID), &rel); err != nil {
			return nil, fmt.Errorf("the review's relationship: %w", err)
		}
		now := c.Tx.Now()
		fb := Feedback{
			ID: c.Tx.NewID("f"), Reviewer: r.ID, Coder: coder.ID, Iteration: rel.Iteration, Type: in.FeedbackType, Priority: in.Priority,
			Items: in.ActionableItems, Text: in.Feedback, ReviewedCommit: rel.ReviewedCommit, Delivery: "pending",
			CreatedAt: now, UpdatedAt: now, UpdatedBy: r.ID, Clock: c.Tx.Clock(),
		}
		if err := c.Tx.Put(FeedbackPath(fb.ID), fb); err != nil {
			return nil, err
		}
		out := &FeedbackSent{FeedbackID: fb.ID, TargetInstanceID: coder.ID, CoderStatus: coder.Status}
		c.Target(fb.ID)
		c.Summarize("%s sent %s feedback to %s", r.ID, fb.Type, coder.ID)
		reviewer := *r
		abandonAfter := c.Config.IntValue("review.auto_abandon_after")
		tm := instance.Tmux(c.Config, c.Env)
		c.After(func(ctx context.Context, f *tools.Followup) error {
			return deliverFeedback(ctx, f, fb, reviewer, coder, abandonAfter, out, tm)
		})
		return out, nil
	})

// deliverFeedback commits the feedback in the coder's worktree and notes
// it on the reviewed commit, records the outcome (coder ACTIVE, or
// ABANDONED at review.auto_abandon_after needs_work reviews; reviewer
// TERMINATED), then removes the reviewer and tells the coder.
func deliverFeedback(ctx context.Context, f *tools.Followup, fb Feedback, reviewer, coder tools.Agent, abandonAfter int, out *FeedbackSent, tm tmux.Runner) error {
	body := FeedbackMarkdown(fb)
	commit, err := f.Repo.CommitFile(ctx, coder.Worktree, coder.Branch, FeedbackFile, []byte(body),
		fmt.Sprintf("Review feedback (%s, iteration %d) from %s", fb.Type, fb.Iteration, fb.Reviewer),
		gitstate.Signature{Name: reviewer.ID, Email: reviewer.ID + "@agents.git-codex.invalid"})
	if err == nil {
		_, err = f.Repo.AppendNoteOnce(ctx, repo.RefReviewNotes, fb.ReviewedCommit, body, "- feedback id: "+fb.ID+"\n")
	}
	if err != nil {
		rerr := f.Record(ctx, func(c *tools.Call) error {
			c.Target(fb.ID)
			c.Summarize("feedback %s could not be delivered to %s", fb.ID, coder.ID)
			fb.Delivery, fb.DeliveryError, fb.Commit = "failed", err.Error(), commit
			fb.UpdatedAt, fb.Clock = c.Tx.Now(), c.Tx.Clock()
			return c.Tx.Put(FeedbackPath(fb.ID), fb)
		})
		if rerr != nil {
			return rerr
		}
		return tools.Errorf(tools.FeedbackNotDelivered, "the feedback could not be committed in %s's worktree: %v; it is kept (%s), and you may send it again", coder.ID, err, fb.ID).
			With("feedback_id", fb.ID).With("coder", coder.ID)
	}
	out.GitCommitHash = commit
	err = f.Record(ctx, func(c *tools.Call) error {
		c.Target(fb.ID)
		fb.Delivery, fb.Commit, fb.UpdatedAt, fb.Clock = "delivered", commit, c.Tx.Now(), c.Tx.Clock()
		if err := c.Tx.Put(FeedbackPath(fb.ID), fb); err != nil {
			return err
		}
		status, reason := tools.StatusActive, ""
		if fb.Type == "needs_work" && abandonAfter > 0 {
			n, err := needsWorkCount(c.Tx, coder.ID)
			if err != nil {
				return err
			}
			if n >= abandonAfter {
				status = tools.StatusAbandoned
				reason = fmt.Sprintf("abandoned automatically: %d needs_work reviews (review.auto_abandon_after %d), the last %s by %s", n, abandonAfter, fb.ID, reviewer.ID)
			}
		}
		out.CoderStatus = status
		if err := endReview(c, coder.ID, reviewer.ID, status); err != nil {
			return err
		}
		if reason != "" {
			if err := recordReason(c, coder.ID, status, reason); err != nil {
				return err
			}
		}
		r, err := tools.GetAgent(c.Tx, reviewer.ID)
		if err != nil {
			return err
		}
		c.Summarize("feedback %s delivered to %s as %.12s; %s is %s", fb.ID, coder.ID, commit, coder.ID, status)
		return instance.SetStatus(c, &r, tools.StatusTerminated, "its feedback was delivered")
	})
	if err != nil {
		return err
	}
	var endReviewer func()
	out.CleanupStatus, endReviewer = RemoveReviewer(ctx, f, tm, reviewer)
	// the reviewer's own session ends only once the coder has been told:
	// when the reviewer calls this from that session, ending it ends this
	// very process, which under load cut the nudge short between its text
	// and its Enter (the coder then never read it)
	defer endReviewer()
	if out.CoderStatus == tools.StatusAbandoned {
		instance.KillSession(ctx, tm, coder.TmuxSession)
		return nil
	}
	how, err := instance.Nudge(ctx, tm, coder, fmt.Sprintf("Review feedback (%s) arrived in %s, commit %.12s: read it and carry on.", fb.Type, FeedbackFile, commit))
	instance.RecordNudge(ctx, f, coder, "the news of feedback "+fb.ID, how, err)
	out.Nudged = err == nil
	return nil
}

// needsWorkCount counts the needs_work feedback a coder has received
// from the review loop (a GitHub review's is not one of its iterations).
func needsWorkCount(tx *gitstate.Tx, coder string) (int, error) {
	n := 0
	err := tools.WalkJSON(tx, DirFeedback, func(f Feedback) {
		if f.Coder == coder && f.Type == "needs_work" && f.Delivery == "delivered" && !strings.HasPrefix(f.Reviewer, GitHubReviewer) {
			n++
		}
	})
	return n, err
}

package review

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
)

// reviewSuggestions are seed 000's answers to a coder at the review limit.
var reviewSuggestions = []string{
	"Create pull request with current work",
	"Abandon this approach and try different solution",
	"Manually review and fix issues before requesting review",
}

// RequestReviewIn is request_review's input.
type RequestReviewIn struct {
	ReviewerPrompt    string `json:"reviewer_prompt,omitempty" jsonschema:"default: the generated review prompt"`
	CompletionMessage string `json:"completion_message,omitempty" jsonschema:"a summary of the work"`
}

// ReviewRequested is what request_review returns.
type ReviewRequested struct {
	ReviewInstanceID string `json:"review_instance_id"`
	SessionName      string `json:"session_name"`
	WorktreePath     string `json:"worktree_path"`
	BranchName       string `json:"branch_name" jsonschema:"the branch being reviewed"`
	ReviewIteration  int    `json:"review_iteration"`
	ReviewedCommit   string `json:"reviewed_commit"`
	Warning          string `json:"warning,omitempty" jsonschema:"e.g. uncommitted changes the reviewer cannot see"`
}

// RequestReview spawns a reviewer for the calling coder's branch head.
var RequestReview = tools.Define("request_review", "review.request",
	"Request a review of your branch's last commit: a review agent starts on it; you are WAITING_REVIEW until REVIEW_FEEDBACK.md is committed to your branch. "+
		"REVIEW_LIMIT_EXCEEDED after review.max_iterations.",
	tools.CLI{Path: "review request"},
	func(ctx context.Context, c *tools.Call, in RequestReviewIn) (*ReviewRequested, error) {
		coder := c.Agent
		if coder == nil || coder.Type != tools.TypeCoding || coder.Status == "" {
			return nil, tools.Errorf(tools.PermissionDenied, "only coding agents that git codex runs request reviews").With("agent_type", string(c.Caller.Type))
		}
		if coder.Status != tools.StatusActive {
			next := ""
			if coder.Status == tools.StatusWaitingReview {
				// the loop commits REVIEW_FEEDBACK.md before it records
				// the review as over: an agent that found the file in
				// between learns when to ask again
				next = "; wait until you are told the feedback arrived (you are ACTIVE again then), and ask again"
			}
			return nil, tools.Errorf(tools.InvalidAgentState, "%s is %s; a review can be requested only while ACTIVE (one review at a time)%s", coder.ID, coder.Status, next).
				With("agent_id", coder.ID).With("status", coder.Status)
		}
		iteration, err := reviewIterations(c.Tx, coder.ID)
		if err != nil {
			return nil, err
		}
		if limit := c.Config.IntValue("review.max_iterations"); iteration >= limit {
			return nil, tools.Errorf(tools.ReviewLimitExceeded, "Maximum review iterations (%d) reached for agent %s. Consider creating a pull request or abandoning.", limit, coder.ID).
				With("current_iteration", iteration).With("max_iterations", limit).With("suggestions", reviewSuggestions).With("agent_id", coder.ID)
		}
		reviewed, err := c.Repo.RevParse(ctx, "refs/heads/"+coder.Branch)
		if err != nil {
			return nil, tools.Errorf(tools.InvalidAgentState, "%s's branch %s is gone; nothing to review", coder.ID, coder.Branch).With("agent_id", coder.ID)
		}
		if reviewed == coder.BaseCommit {
			return nil, tools.Errorf(tools.InvalidAgentState, "%s has no commits beyond its base %.12s; commit your work first", coder.ID, coder.BaseCommit).With("agent_id", coder.ID)
		}
		l, err := instance.LauncherFor(c.Config, coder.Launcher)
		if err != nil {
			return nil, err
		}
		id := instance.NewID(tools.TypeReview, c.Tx.Now())
		if _, err := c.Tx.Read(tools.AgentPath(id)); err == nil {
			return nil, tools.Errorf(tools.AlreadyExists, "reviewer id %s is taken; try again", id)
		}
		release, err := c.Repo.HoldWork(id)
		if err != nil {
			return nil, tools.Errorf(tools.AlreadyExists, "reviewer %s is being made by another call", id)
		}
		c.Tx.OnAbort(func(context.Context) error { release(); return nil })
		machine, host, err := instance.MachineHere(c)
		if err != nil {
			return nil, err
		}
		now, clock := c.Tx.Now(), c.Tx.Clock()
		iteration++
		token := tools.NewSecret(tools.PrefixAgentToken) // the reviewer's credential (see spawn)
		r := tools.Agent{
			ID: id, Type: tools.TypeReview, State: tools.StateIdle, Status: tools.StatusStarting, Supervisor: coder.ID, ReviewOf: coder.ID,
			Worktree: filepath.Join(instance.WorktreeDir(c), id), Branch: instance.BranchName(id), TmuxSession: instance.SessionName(id), Launcher: l.Name,
			Machine: machine, Host: host, BaseCommit: reviewed, Prompt: in.ReviewerPrompt,
			CreatedBy: coder.ID, CreatedAt: now, UpdatedAt: now, UpdatedBy: coder.ID, TokenHash: tools.HashSecret(token), Clock: clock,
		}
		if c.Repo.BranchExists(ctx, r.Branch) {
			return nil, tools.Errorf(tools.AlreadyExists, "branch %s already exists; try again", r.Branch)
		}
		rel := Relationship{Type: RelSpawnedReview, Parent: coder.ID, Child: id, Iteration: iteration, ReviewedCommit: reviewed,
			CreatedAt: now, CreatedBy: coder.ID, Clock: clock}
		active := ActiveReview{Coder: coder.ID, Review: id, Claim: &tools.Claim{Holder: id, Clock: clock, At: now}, UpdatedAt: now, UpdatedBy: coder.ID, Clock: clock}
		if err := claimReview(c.Tx, active); err != nil {
			return nil, err
		}
		coder.Status, coder.UpdatedAt, coder.UpdatedBy, coder.Clock = tools.StatusWaitingReview, now, coder.ID, clock
		for _, w := range []struct {
			path string
			v    any
		}{{tools.AgentPath(id), r}, {RelationshipPath(coder.ID, id), rel}, {ActiveReviewPath(coder.ID), active}, {tools.AgentPath(coder.ID), *coder}} {
			if err := c.Tx.Put(w.path, w.v); err != nil {
				return nil, err
			}
		}
		out := &ReviewRequested{ReviewInstanceID: id, SessionName: r.TmuxSession, WorktreePath: r.Worktree, BranchName: coder.Branch,
			ReviewIteration: iteration, ReviewedCommit: reviewed}
		c.Target(id)
		c.Summarize("%s asked for review %d of %.12s: %s", coder.ID, iteration, reviewed, id)
		cw := *coder
		timeout, err := instance.StartTimeout(c.Config, 0)
		if err != nil {
			return nil, err
		}
		c.After(func(ctx context.Context, f *tools.Followup) error {
			defer release()
			if w, err := f.Repo.WorkIn(ctx, cw.Worktree, ""); err == nil && len(w.Dirty) > 0 {
				out.Warning = fmt.Sprintf("%d uncommitted change(s) in %s are not in the reviewed commit; the reviewer cannot see them", len(w.Dirty), cw.Worktree)
			}
			stat, _ := f.Repo.DiffStat(ctx, cw.BaseCommit, reviewed)
			prompt := reviewPrompt(f.Store.WorkDir(), r, cw, iteration, in.CompletionMessage, stat)
			spawned := &instance.Spawned{}
			return instance.Start(ctx, f, r, token, l, prompt, tools.StatusReviewing, timeout, spawned, func(c *tools.Call) error {
				// the reviewer never started: the coder is no longer waiting
				return endReview(c, cw.ID, id, tools.StatusActive)
			})
		})
		return out, nil
	})

// reviewIterations is how many reviews a coder has had: the highest
// iteration of its spawned_review relationships.
func reviewIterations(tx *gitstate.Tx, coder string) (int, error) {
	n := 0
	err := tools.WalkJSON(tx, dirRelationships+"/"+coder, func(r Relationship) {
		if r.Type == RelSpawnedReview && r.Iteration > n {
			n = r.Iteration
		}
	})
	return n, err
}

// claimReview takes the coder's one active review for a reviewer.
func claimReview(tx *gitstate.Tx, r ActiveReview) error {
	var cur ActiveReview
	err := tx.Get(ActiveReviewPath(r.Coder), &cur)
	if err == nil && cur.Claim != nil {
		return tools.Errorf(tools.InvalidAgentState, "%s already has an active review by %s", r.Coder, cur.Claim.Holder).With("agent_id", r.Coder).With("reviewer", cur.Claim.Holder)
	}
	if err != nil && !errors.Is(err, gitstate.ErrNotFound) {
		return err
	}
	return nil
}

// reviewPrompt is the first prompt of a reviewer: the reviewer_prompt
// given, else the registry's `codex review changes` (a team can override
// it), else the one built here.
func reviewPrompt(root string, r, coder tools.Agent, iteration int, completion, diffstat string) string {
	if r.Prompt != "" {
		return r.Prompt
	}
	input := fmt.Sprintf("Review iteration %d; the commit under review is %.12s.\n\n%s\n\nWhen you are done, call send_feedback once with feedback_type needs_work, suggestions, clarification or approved, your feedback and actionable_items; your session ends when it is delivered.",
		iteration, r.BaseCommit, strings.TrimSpace(diffstat))
	vars := map[string]string{"uv-coder": coder.ID, "uv-base": ShortHash(coder.BaseCommit), "codex_task_id": coder.ID,
		"codex_task_title": completion, "codex_task_description": coder.Prompt, "input_text": input}
	if p, ok := instance.RegistryPrompt(root, "codex", "review", "changes", r, vars); ok {
		return p
	}
	var b strings.Builder
	fmt.Fprintf(&b, "You are %s, a review agent run by git codex. Review iteration %d of the work of %s.\n\n", r.ID, iteration, coder.ID)
	fmt.Fprintf(&b, "Your worktree (%s) holds the commit under review, %.12s, on branch %s; the work started at %.12s.\n\n", r.Worktree, r.BaseCommit, r.Branch, coder.BaseCommit)
	if completion != "" {
		fmt.Fprintf(&b, "The coder says:\n\n%s\n\n", completion)
	}
	if diffstat != "" {
		fmt.Fprintf(&b, "Changed since the base:\n\n%s\n\n", diffstat)
	}
	fmt.Fprintf(&b, "The coder's task was:\n\n%s\n\n", coder.Prompt)
	b.WriteString("Read the changes (git diff " + ShortHash(coder.BaseCommit) + " HEAD), then call send_feedback once with feedback_type ")
	b.WriteString("needs_work, suggestions, clarification or approved, your feedback, and actionable_items. Your session ends when it is delivered.\n")
	return b.String()
}

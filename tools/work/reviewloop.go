package work

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/repo"
	"github.com/gitcodex/git-codex/tmux"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
)

// The review loop (seed 000): a coding instance asks for a review; a
// reviewer is spawned beside it on a fork of its branch head; the
// reviewer's feedback lands as a commit in the coder's worktree and a note
// on the reviewed commit; a limit keeps the loop from running forever.

const (
	dirRelationships = "relationships"
	dirFeedback      = "feedback"
	// RelSpawnedReview is the relationship of a coder to a reviewer it
	// asked for.
	RelSpawnedReview = "spawned_review"
	// FeedbackFile is the file feedback is committed as in the coder's
	// worktree.
	FeedbackFile = "REVIEW_FEEDBACK.md"
)

func relationshipPath(parent, child string) string {
	return dirRelationships + "/" + parent + "/" + child + ".json"
}

func feedbackPath(id string) string {
	return dirFeedback + "/" + gitstate.Fanout(id) + "/" + id + ".json"
}

// Relationship links two instances: a coder and the reviewer it spawned,
// with the iteration of the review loop. Never deleted: the iteration
// count comes from them.
type Relationship struct {
	Type           string         `json:"type"`
	Parent         string         `json:"parent"`
	Child          string         `json:"child"`
	Iteration      int            `json:"iteration"`
	ReviewedCommit string         `json:"reviewed_commit"`
	CreatedAt      time.Time      `json:"created_at"`
	CreatedBy      string         `json:"created_by"`
	Clock          gitstate.Clock `json:"clock"`
}

// relationshipKind: relationships/<parent>/<child>.json.
func relationshipKind() tools.Kind {
	return tools.RecordKind(tools.Kind{Name: "relationship", Dir: dirRelationships, Depth: 2, Kept: true}, func(rel []string, name string, r *Relationship) error {
		if r.Parent != rel[0] || r.Child != name || tools.ValidateAgentID(r.Parent) != nil || tools.ValidateAgentID(r.Child) != nil {
			return fmt.Errorf("relationship %s -> %s does not belong at this path", r.Parent, r.Child)
		}
		return nil
	})
}

// Feedback is one review's verdict, with its full text and where it was
// delivered. Never deleted; its delivery fields change once.
type Feedback struct {
	ID             string         `json:"id"`
	Reviewer       string         `json:"reviewer"`
	Coder          string         `json:"coder"`
	Iteration      int            `json:"iteration"`
	Type           string         `json:"feedback_type"`
	Priority       string         `json:"priority,omitempty"`
	Items          []string       `json:"actionable_items,omitempty"`
	Text           string         `json:"feedback"`
	ReviewedCommit string         `json:"reviewed_commit"`
	Delivery       string         `json:"delivery" jsonschema:"pending, delivered or failed"`
	Commit         string         `json:"commit,omitempty" jsonschema:"the commit that added REVIEW_FEEDBACK.md to the coder's branch"`
	DeliveryError  string         `json:"delivery_error,omitempty"`
	CreatedAt      time.Time      `json:"created_at"`
	UpdatedAt      time.Time      `json:"updated_at"`
	UpdatedBy      string         `json:"updated_by"`
	Clock          gitstate.Clock `json:"clock"`
}

var feedbackIDPattern = tools.LazyRegexp(`^f-[0-9a-z]{16}$`)

// feedbackKind: feedback/<x>/<y>/<id>.json.
func feedbackKind() tools.Kind {
	return tools.RecordKind(tools.Kind{Name: "feedback", Dir: dirFeedback, Depth: 3, Fanout: 2, Kept: true}, func(rel []string, name string, f *Feedback) error {
		if f.ID != name || !feedbackIDPattern.MatchString(f.ID) || !tools.FannedOut(rel, f.ID) {
			return fmt.Errorf("feedback record %q does not belong at this path", f.ID)
		}
		return nil
	})
}

// Feedback types and priorities (seed 000, plus approved to end a loop).
var (
	feedbackTypes = []string{"needs_work", "suggestions", "clarification", "approved"}
	priorities    = []string{"low", "medium", "high", "critical"}
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
			return nil, tools.Errorf(tools.InvalidAgentState, "%s is %s; a review can be requested only while ACTIVE (one review at a time)", coder.ID, coder.Status).
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
		}{{tools.AgentPath(id), r}, {relationshipPath(coder.ID, id), rel}, {activeReviewPath(coder.ID), active}, {tools.AgentPath(coder.ID), *coder}} {
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
	err := tx.Get(activeReviewPath(r.Coder), &cur)
	if err == nil && cur.Claim != nil {
		return tools.Errorf(tools.InvalidAgentState, "%s already has an active review by %s", r.Coder, cur.Claim.Holder).With("agent_id", r.Coder).With("reviewer", cur.Claim.Holder)
	}
	if err != nil && !errors.Is(err, gitstate.ErrNotFound) {
		return err
	}
	return nil
}

// endReview frees a coder's active review and sets the coder's status
// (unless it has ended meanwhile).
func endReview(c *tools.Call, coderID, reviewer, coderStatus string) error {
	now, clock := c.Tx.Now(), c.Tx.Clock()
	active := ActiveReview{Coder: coderID, Review: reviewer, UpdatedAt: now, UpdatedBy: c.Caller.ID, Clock: clock}
	if err := c.Tx.Put(activeReviewPath(coderID), active); err != nil {
		return err
	}
	coder, err := tools.GetAgent(c.Tx, coderID)
	if err != nil || instance.Final(coder.Status) {
		return err
	}
	coder.Status, coder.UpdatedAt, coder.UpdatedBy, coder.Clock = coderStatus, now, c.Caller.ID, clock
	if instance.Final(coderStatus) {
		coder.EndedAt = &now
	}
	return c.Tx.Put(tools.AgentPath(coderID), coder)
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
	vars := map[string]string{"uv-coder": coder.ID, "uv-base": shortHash(coder.BaseCommit), "codex_task_id": coder.ID,
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
	b.WriteString("Read the changes (git diff " + shortHash(coder.BaseCommit) + " HEAD), then call send_feedback once with feedback_type ")
	b.WriteString("needs_work, suggestions, clarification or approved, your feedback, and actionable_items. Your session ends when it is delivered.\n")
	return b.String()
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

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
		if err := c.Tx.Get(activeReviewPath(r.ReviewOf), &active); err != nil || active.Claim == nil || active.Claim.Holder != r.ID {
			return nil, tools.Errorf(tools.PermissionDenied, "%s is not the active reviewer of %s", r.ID, r.ReviewOf).With("agent_id", r.ID).With("coder", r.ReviewOf)
		}
		coder, err := tools.GetAgent(c.Tx, r.ReviewOf)
		if err != nil {
			return nil, err
		}
		var rel Relationship
		if err := c.Tx.Get(relationshipPath(coder.ID, r.ID), &rel); err != nil {
			return nil, fmt.Errorf("the review's relationship: %w", err)
		}
		now := c.Tx.Now()
		fb := Feedback{
			ID: c.Tx.NewID("f"), Reviewer: r.ID, Coder: coder.ID, Iteration: rel.Iteration, Type: in.FeedbackType, Priority: in.Priority,
			Items: in.ActionableItems, Text: in.Feedback, ReviewedCommit: rel.ReviewedCommit, Delivery: "pending",
			CreatedAt: now, UpdatedAt: now, UpdatedBy: r.ID, Clock: c.Tx.Clock(),
		}
		if err := c.Tx.Put(feedbackPath(fb.ID), fb); err != nil {
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
	body := feedbackMarkdown(fb)
	commit, err := f.Repo.CommitFile(ctx, coder.Worktree, coder.Branch, FeedbackFile, []byte(body),
		fmt.Sprintf("Review feedback (%s, iteration %d) from %s", fb.Type, fb.Iteration, fb.Reviewer),
		gitstate.Signature{Name: reviewer.ID, Email: reviewer.ID + "@agents.git-codex.invalid"})
	if err == nil {
		err = f.Repo.AddNote(ctx, repo.RefReviewNotes, fb.ReviewedCommit, body)
	}
	if err != nil {
		rerr := f.Record(ctx, func(c *tools.Call) error {
			c.Target(fb.ID)
			c.Summarize("feedback %s could not be delivered to %s", fb.ID, coder.ID)
			fb.Delivery, fb.DeliveryError, fb.Commit = "failed", err.Error(), commit
			fb.UpdatedAt, fb.Clock = c.Tx.Now(), c.Tx.Clock()
			return c.Tx.Put(feedbackPath(fb.ID), fb)
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
		if err := c.Tx.Put(feedbackPath(fb.ID), fb); err != nil {
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
	out.CleanupStatus, endReviewer = removeReviewer(ctx, f, tm, reviewer)
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

// recordReason records why a coder ended as it did (every way an instance
// ends records one), if endReview left it at that status.
func recordReason(c *tools.Call, id, status, reason string) error {
	a, err := tools.GetAgent(c.Tx, id)
	if err != nil || a.Status != status {
		return err
	}
	a.StatusReason = reason
	return c.Tx.Put(tools.AgentPath(id), a)
}

// needsWorkCount counts the needs_work feedback a coder has received
// from the review loop (a GitHub review's is not one of its iterations).
func needsWorkCount(tx *gitstate.Tx, coder string) (int, error) {
	n := 0
	err := tools.WalkJSON(tx, dirFeedback, func(f Feedback) {
		if f.Coder == coder && f.Type == "needs_work" && f.Delivery == "delivered" && !strings.HasPrefix(f.Reviewer, githubReviewer) {
			n++
		}
	})
	return n, err
}

// removeReviewer removes a reviewer that delivered its feedback: its work
// saved first, then its worktree and branch, and its session last. When
// the call comes from inside that session (the reviewer's own MCP server),
// the kill is left to a detached process a moment later, so the answer
// gets out first (endsession.go): end starts it, and the caller calls end
// once nothing else is left to do in this process (a no-op otherwise).
func removeReviewer(ctx context.Context, f *tools.Followup, tm tmux.Runner, r tools.Agent) (status string, end func()) {
	inside := os.Getenv("CODEX_INSTANCE") == r.ID
	it := instance.Clean(ctx, f, tm, r, instance.CleanupIn{}, !inside)
	if it.Error == "" {
		f.Record(ctx, func(c *tools.Call) error {
			a, err := tools.GetAgent(c.Tx, r.ID)
			if err != nil {
				return err
			}
			now := c.Tx.Now()
			a.CleanedAt, a.Rescued, a.UpdatedAt, a.Clock = &now, append(a.Rescued, it.Rescued...), now, c.Tx.Clock()
			c.Summarize("%s removed", r.ID)
			return c.Tx.Put(tools.AgentPath(r.ID), a)
		})
	}
	session := it.Session
	end = func() {}
	if inside {
		session = "killed in 1s"
		end = func() {
			if cmd := endSessionLater(tm, r.TmuxSession); cmd.Start() == nil {
				go cmd.Wait() // reaped if this process outlives it
			}
		}
	}
	s := fmt.Sprintf("session %s, worktree %s, branch %s", session, it.Worktree, it.Branch)
	if len(it.Rescued) > 0 {
		s += ", work saved in " + strings.Join(it.Rescued, " ")
	}
	if it.Error != "" {
		s += ": " + it.Error
	}
	return s, end
}

// feedbackMarkdown is REVIEW_FEEDBACK.md.
func feedbackMarkdown(fb Feedback) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Review feedback: %s\n\n", fb.Type)
	fmt.Fprintf(&b, "- reviewer: %s\n- iteration: %d\n- reviewed commit: %s\n", fb.Reviewer, fb.Iteration, fb.ReviewedCommit)
	if fb.Priority != "" {
		fmt.Fprintf(&b, "- priority: %s\n", fb.Priority)
	}
	fmt.Fprintf(&b, "- feedback id: %s\n\n%s\n", fb.ID, strings.TrimRight(fb.Text, "\n"))
	if len(fb.Items) > 0 {
		b.WriteString("\n## Actionable items\n\n")
		for _, it := range fb.Items {
			fmt.Fprintf(&b, "- [ ] %s\n", it)
		}
	}
	return b.String()
}

package review

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
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
	DirFeedback      = "feedback"
	// RelSpawnedReview is the relationship of a coder to a reviewer it
	// asked for.
	RelSpawnedReview = "spawned_review"
	// FeedbackFile is the file feedback is committed as in the coder's
	// worktree.
	FeedbackFile = "REVIEW_FEEDBACK.md"
)

func FeedbackPath(id string) string {
	return DirFeedback + "/" + gitstate.Fanout(id) + "/" + id + ".json"
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
	return tools.RecordKind(tools.Kind{Name: "feedback", Dir: DirFeedback, Depth: 3, Fanout: 2, Kept: true}, func(rel []string, name string, f *Feedback) error {
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

// endReview frees a coder's active review and sets the coder's status
// (unless it has ended meanwhile).
func endReview(c *tools.Call, coderID, reviewer, coderStatus string) error {
	now, clock := c.Tx.Now(), c.Tx.Clock()
	active := ActiveReview{Coder: coderID, Review: reviewer, UpdatedAt: now, UpdatedBy: c.Caller.ID, Clock: clock}
	if err := c.Tx.Put(ActiveReviewPath(coderID), active); err != nil {
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

func ShortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
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

// RemoveReviewer removes a reviewer that delivered its feedback: its work
// saved first, then its worktree and branch, and its session last. When
// the call comes from inside that session (the reviewer's own MCP server),
// the kill is left to a detached process a moment later, so the answer
// gets out first (endsession.go): end starts it, and the caller calls end
// once nothing else is left to do in this process (a no-op otherwise).
func RemoveReviewer(ctx context.Context, f *tools.Followup, tm tmux.Runner, r tools.Agent) (status string, end func()) {
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

// FeedbackMarkdown is REVIEW_FEEDBACK.md.
func FeedbackMarkdown(fb Feedback) string {
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

// GitHubReviewer prefixes the reviewer of a GitHub review's feedback: the
// person's login on GitHub, never an agent id.
const GitHubReviewer = "github:"

package work

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/mail"
)

// GitHub reviews come back (issue 28, docs/WATCH.md): a person's review
// of a pull request an instance opened is delivered to that instance as
// review feedback, through send_feedback's path: a REVIEW_FEEDBACK.md
// commit on its branch, a note on the reviewed commit, and (the watcher's)
// a wake-up. Each review is delivered once, whichever watcher or clone
// fetches it: a record per review (ghreviews/<x>/<y>/gr-<id>.json) is
// claimed under the writer lock before the commit is made, and a commit
// already made by a watcher killed half-way is found by its trailer, not
// made again. Nothing is posted to GitHub: this path only reads.

// deliverable reports a review that is feedback: submitted (not PENDING,
// which only its author sees) and not DISMISSED.
func deliverable(r tools.PRReview) bool {
	switch r.State {
	case tools.ReviewApproved, tools.ReviewChangesRequested, tools.ReviewCommented:
		return true
	}
	return false
}

// feedbackType maps GitHub's verdict onto send_feedback's types.
func feedbackType(r tools.PRReview) string {
	switch r.State {
	case tools.ReviewApproved:
		return "approved"
	case tools.ReviewChangesRequested:
		return "needs_work"
	}
	return "suggestions"
}

const dirGitHubReviews = "ghreviews"

var githubReviewIDPattern = tools.LazyRegexp(`^gr-[0-9]{1,19}$`)

// githubReviewID is the record id of GitHub review id.
func githubReviewID(id int64) string { return "gr-" + strconv.FormatInt(id, 10) }

func githubReviewPath(id string) string {
	return dirGitHubReviews + "/" + gitstate.Fanout(id) + "/" + id + ".json"
}

// githubReviewKind: ghreviews/<x>/<y>/gr-<id>.json, one record per GitHub
// review delivered or being delivered. Kept: a peer that dropped one
// would have the review delivered again.
func githubReviewKind() tools.Kind {
	return tools.RecordKind(tools.Kind{Name: "github review", Dir: dirGitHubReviews, Depth: 3, Fanout: 2, Kept: true}, func(rel []string, name string, r *GitHubReview) error {
		if r.ID != name || !githubReviewIDPattern.MatchString(r.ID) || !tools.FannedOut(rel, r.ID) || r.ID != githubReviewID(r.ReviewID) {
			return fmt.Errorf("github review record %q does not belong at this path", r.ID)
		}
		switch r.Delivery {
		case "claimed", "delivered", "failed":
			return nil
		}
		return fmt.Errorf("github review %s has unknown delivery %q", r.ID, r.Delivery)
	})
}

// GitHubReview is one GitHub review of an instance's pull request and its
// delivery. Mutable: Clock is the Lamport time of its last change.
type GitHubReview struct {
	ID          string    `json:"id"`
	ReviewID    int64     `json:"review_id" jsonschema:"GitHub's id of the review"`
	Repo        string    `json:"repo"`
	PR          int       `json:"pr_number"`
	Coder       string    `json:"coder" jsonschema:"the instance whose pull request it reviews"`
	Task        string    `json:"task_id,omitempty"`
	State       string    `json:"github_state" jsonschema:"APPROVED, CHANGES_REQUESTED or COMMENTED"`
	User        string    `json:"user" jsonschema:"the GitHub login of the reviewer"`
	URL         string    `json:"html_url"`
	CommitID    string    `json:"commit_id" jsonschema:"the commit GitHub says was reviewed"`
	SubmittedAt time.Time `json:"submitted_at"`
	Comments    int       `json:"comments" jsonschema:"its line comments"`
	FeedbackID  string    `json:"feedback_id"`
	// Delivery is claimed (a watcher is committing it; Claim says who),
	// delivered, or failed (Why says why; a later pass tries again).
	Delivery string       `json:"delivery"`
	Claim    *ReviewClaim `json:"claim,omitempty"`
	Commit   string       `json:"commit,omitempty" jsonschema:"the commit that added REVIEW_FEEDBACK.md to the coder's branch"`
	Why      string       `json:"why,omitempty"`
	Attempts int          `json:"attempts" jsonschema:"delivery attempts (claims) so far"`
	// Completed is the task an approval completed (github.approval_completes).
	Completed string `json:"completed_task,omitempty"`
	// SentBack is the task a changes request sent back to IN_PROGRESS:
	// from REVIEW, or reopened when an earlier approval of the pull
	// request had completed it (github.approval_completes).
	SentBack  string         `json:"sent_back_task,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
	UpdatedBy string         `json:"updated_by"`
	Clock     gitstate.Clock `json:"clock"`
}

// ReviewClaim is a watcher's claim on a review's delivery: live while a
// process holds its work mark.
type ReviewClaim struct {
	Holder string    `json:"holder"`
	Mark   string    `json:"mark"`
	At     time.Time `json:"at"`
}

func getGitHubReview(src recordSource, id string) (GitHubReview, bool, error) {
	var r GitHubReview
	err := src.Get(githubReviewPath(id), &r)
	if errors.Is(err, gitstate.ErrNotFound) {
		return r, false, nil
	}
	return r, err == nil, err
}

// githubReviewKeys are the settings of GitHub reviews.
func githubReviewKeys() []tools.ConfigKey {
	return []tools.ConfigKey{
		{Name: "github.approval_completes", Kind: "string", Default: "on", OneOf: []string{"off", "on"},
			Doc: "on: an APPROVED review on GitHub of an instance's pull request completes the task the pull request was opened for, and a CHANGES_REQUESTED review sends it back to IN_PROGRESS (from REVIEW, or reopened when an earlier approval completed it), with a mail and a comment (not a task of an epic: epic_approve_pr and epic_request_changes are its supervisor's); off: reviews are only delivered as feedback"},
	}
}

// reviewTrailer names a GitHub review in the feedback commit's message,
// so that a delivery retried after a crash finds the commit it made.
func reviewTrailer(repo string, pr int, id int64) string {
	return fmt.Sprintf("Codex-GitHub-Review: %s#%d/%d", repo, pr, id)
}

// githubFeedback is the feedback text of a GitHub review: its verdict,
// body and line comments (each with the lines of the diff it is about).
func githubFeedback(r tools.PRReview, pr int, comments []tools.PRReviewComment) (text string, items []string) {
	var b strings.Builder
	fmt.Fprintf(&b, "GitHub review by @%s of pull request #%d: %s (%s)\n", r.User, pr, r.State, r.URL)
	if body := strings.TrimSpace(r.Body); body != "" {
		fmt.Fprintf(&b, "\n%s\n", body)
	}
	for _, c := range comments {
		where := c.Path
		if c.Line > 0 {
			where += ":" + strconv.Itoa(c.Line)
		}
		reply := ""
		if c.InReplyTo != 0 {
			reply = " (a reply)"
		}
		fmt.Fprintf(&b, "\n### %s%s\n\n", where, reply)
		if h := strings.TrimRight(c.DiffHunk, "\n"); h != "" {
			fmt.Fprintf(&b, "```diff\n%s\n```\n\n", h)
		}
		fmt.Fprintf(&b, "%s\n", strings.TrimSpace(c.Body))
		items = append(items, where+": "+mail.OneLineCut(c.Body))
	}
	return b.String(), items
}

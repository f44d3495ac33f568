package tools

import (
	"context"
	"time"
)

// GitHub is the forge that pull requests and issues go to. Package github
// implements it over go-gh's REST client; tests point that client at a
// local server speaking GitHub's REST contract. Every call reaches the
// network, so tools make them only in after-steps (Call.After), never
// under the state's writer lock: record the intent, call, record the
// outcome.
type GitHub interface {
	// Repo is the repository calls go to, as owner/name.
	Repo() string
	// DefaultBranch is the repository's default branch (the base of a pull
	// request that names none).
	DefaultBranch(ctx context.Context) (string, error)
	// CreatePullRequest opens a pull request from in.Head into in.Base.
	CreatePullRequest(ctx context.Context, in NewPullRequest) (PullRequest, error)
	// FindPullRequest finds the open pull request from head into base; ok
	// is false when there is none. A retried create asks first, so nothing
	// is opened twice.
	FindPullRequest(ctx context.Context, head, base string) (pr PullRequest, ok bool, err error)
	// GetPullRequest reads pull request number.
	GetPullRequest(ctx context.Context, number int) (PullRequest, error)
	// MergePullRequest merges pull request number with method (merge,
	// squash or rebase) and returns the merge commit.
	MergePullRequest(ctx context.Context, number int, method string) (sha string, err error)
	// CreateIssue opens an issue.
	CreateIssue(ctx context.Context, in NewIssue) (Issue, error)
	// FindIssue finds an issue whose body holds marker (git codex puts
	// one in every issue it opens); ok is false when there is none. A
	// replayed create_issues asks first, so nothing is opened twice.
	FindIssue(ctx context.Context, marker string) (issue Issue, ok bool, err error)
}

// NewPullRequest is what opening a pull request needs.
type NewPullRequest struct {
	Title string
	Body  string
	Head  string // the branch with the changes
	Base  string // the branch to merge into
}

// PullRequest is a pull request as GitHub reports it.
type PullRequest struct {
	Number int    `json:"pr_number"`
	URL    string `json:"pr_url"`
	Head   string `json:"head"`
	Base   string `json:"base"`
	State  string `json:"state"` // open or closed
	Merged bool   `json:"merged"`
}

// NewIssue is what opening an issue needs.
type NewIssue struct {
	Title  string
	Body   string
	Labels []string
}

// Issue is an opened issue.
type Issue struct {
	Number int    `json:"number"`
	URL    string `json:"url"`
}

// GitHubSettings say where the forge is, from the state's config and the
// process environment.
type GitHubSettings struct {
	// Dir is the work tree whose remote names the repository (GH_REPO
	// overrides it).
	Dir string
	// APIURL is the REST endpoint (config github.api_url, or
	// CODEX_GITHUB_API_URL); empty means GitHub's own.
	APIURL string
}

// GitHubOpener connects to the forge. It fails with a *GitHubError (Status
// 0) when no repository or token can be found.
type GitHubOpener func(ctx context.Context, s GitHubSettings) (GitHub, error)

// GitHubError is a forge call that failed: refused (Status is the HTTP
// status) or never answered (Status 0).
type GitHubError struct {
	Status  int
	Message string
	// RetryAt is when a rate limit resets (zero when none was given).
	RetryAt time.Time
}

func (e *GitHubError) Error() string { return e.Message }

// Transient reports a failure that trying again may cure: no answer, a
// server error, or a rate limit.
func (e *GitHubError) Transient() bool {
	return e.Status == 0 || e.Status >= 500 || e.Status == 429 || (e.Status == 403 && !e.RetryAt.IsZero())
}

// GitHubReviews is a forge that can list a pull request's reviews and
// review comments (package github's Client is one). It is apart from
// GitHub so that forges without it still serve the other calls.
type GitHubReviews interface {
	// ListReviews lists pull request number's reviews, oldest first,
	// every page.
	ListReviews(ctx context.Context, number int) ([]PRReview, error)
	// ListReviewComments lists its review comments (comments on lines of
	// its diff), every page.
	ListReviewComments(ctx context.Context, number int) ([]PRReviewComment, error)
}

// GitHub's review states.
const (
	ReviewApproved         = "APPROVED"
	ReviewChangesRequested = "CHANGES_REQUESTED"
	ReviewCommented        = "COMMENTED"
	ReviewDismissed        = "DISMISSED"
	ReviewPending          = "PENDING"
)

// PRReview is a pull request review as GitHub reports it.
type PRReview struct {
	ID          int64     `json:"id"`
	User        string    `json:"user"`
	Body        string    `json:"body"`
	State       string    `json:"state"`
	CommitID    string    `json:"commit_id"`
	SubmittedAt time.Time `json:"submitted_at"`
	URL         string    `json:"html_url"`
}

// PRReviewComment is a comment on a line of a pull request's diff.
type PRReviewComment struct {
	ID        int64  `json:"id"`
	ReviewID  int64  `json:"pull_request_review_id"`
	InReplyTo int64  `json:"in_reply_to_id,omitempty"`
	User      string `json:"user"`
	Path      string `json:"path"`
	Line      int    `json:"line,omitempty"`
	Side      string `json:"side,omitempty"`
	Body      string `json:"body"`
	DiffHunk  string `json:"diff_hunk,omitempty"`
	URL       string `json:"html_url"`
}

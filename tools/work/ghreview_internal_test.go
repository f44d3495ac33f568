package work

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/review"
)

// TestGitHubReviewVerdicts: only submitted reviews are feedback, and each
// of GitHub's verdicts maps onto send_feedback's types.
func TestGitHubReviewVerdicts(t *testing.T) {
	for state, want := range map[string]string{tools.ReviewApproved: "approved", tools.ReviewChangesRequested: "needs_work", tools.ReviewCommented: "suggestions", tools.ReviewDismissed: "", tools.ReviewPending: ""} {
		r := tools.PRReview{State: state}
		if deliverable(r) != (want != "") {
			t.Errorf("%s: deliverable %v", state, deliverable(r))
		}
		if want != "" && feedbackType(r) != want {
			t.Errorf("%s: type %q, want %q", state, feedbackType(r), want)
		}
	}
}

// TestGitHubFeedbackText: the body, then each line comment under its
// path:line with its diff hunk; one actionable item per comment.
func TestGitHubFeedbackText(t *testing.T) {
	r := tools.PRReview{ID: 7, User: "alice", State: tools.ReviewChangesRequested, Body: "Rework it.\n", URL: "https://github.com/o/r/pull/1#pullrequestreview-7"}
	text, items := githubFeedback(r, 1, []tools.PRReviewComment{
		{Path: "a.go", Line: 3, Body: "why\nthis?", DiffHunk: "@@ -1 +1,3 @@\n+x\n"},
		{Path: "b.go", Body: "whole file", InReplyTo: 9},
	})
	for _, want := range []string{
		"GitHub review by @alice of pull request #1: CHANGES_REQUESTED (https://github.com/o/r/pull/1#pullrequestreview-7)\n\nRework it.\n",
		"\n### a.go:3\n\n```diff\n@@ -1 +1,3 @@\n+x\n```\n\nwhy\nthis?\n",
		"\n### b.go (a reply)\n\nwhole file\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if len(items) != 2 || items[0] != "a.go:3: why this?" || items[1] != "b.go: whole file" {
		t.Errorf("items %q", items)
	}
	md := githubFeedbackMarkdown(review.Feedback{ID: "f-0123456789abcdef", Type: "needs_work", Text: text, Items: items, ReviewedCommit: "c0ffee"},
		GitHubReview{User: "alice", State: tools.ReviewChangesRequested, PR: 1})
	if !strings.HasPrefix(md, "# Review feedback: needs_work\n\n- reviewer: @alice on GitHub (CHANGES_REQUESTED)\n- pull request: #1\n- reviewed commit: c0ffee\n- feedback id: f-0123456789abcdef\n\n") ||
		!strings.HasSuffix(md, "## Actionable items\n\n- [ ] a.go:3: why this?\n- [ ] b.go: whole file\n") {
		t.Errorf("markdown:\n%s", md)
	}
}

// TestGitHubReviewRetryWait: a minute, doubling, at most an hour.
func TestGitHubReviewRetryWait(t *testing.T) {
	for n, want := range map[int]time.Duration{0: time.Minute, 1: time.Minute, 2: 2 * time.Minute, 4: 8 * time.Minute, 7: time.Hour, 50: time.Hour} {
		if got := retryWait(n); got != want {
			t.Errorf("retryWait(%d) = %s, want %s", n, got, want)
		}
	}
}

// TestGitHubReviewRecordPath: a record from a peer must sit at its own
// path, named by its review id, with a known delivery.
func TestGitHubReviewRecordPath(t *testing.T) {
	rec := func(id string, review int64, delivery string) []byte {
		b, _ := json.Marshal(GitHubReview{ID: id, ReviewID: review, Delivery: delivery})
		return b
	}
	if err := Builtin().Kinds().ValidateRecord(githubReviewPath("gr-82"), rec("gr-82", 82, "delivered")); err != nil {
		t.Errorf("a good record: %v", err)
	}
	for name, c := range map[string]struct {
		path string
		data []byte
	}{
		"another id":       {githubReviewPath("gr-82"), rec("gr-83", 83, "delivered")},
		"id and review":    {githubReviewPath("gr-82"), rec("gr-82", 81, "delivered")},
		"not fanned out":   {"ghreviews/gr-82.json", rec("gr-82", 82, "delivered")},
		"wrong bucket":     {"ghreviews/2/8/gr-82.json", rec("gr-82", 82, "delivered")},
		"unknown delivery": {githubReviewPath("gr-82"), rec("gr-82", 82, "maybe")},
		"not an id":        {githubReviewPath("gr-x2"), rec("gr-x2", 0, "delivered")},
	} {
		if err := Builtin().Kinds().ValidateRecord(c.path, c.data); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

package github_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/github/githubtest"
	"github.com/gitcodex/git-codex/tools"
)

// TestReviews: a pull request's reviews and review comments come back
// whole across pages (150 reviews: two pages of 100, the Link header
// followed), in GitHub's order, with the fields delivery uses; every page
// carries the token; a failure is GitHub's status.
func TestReviews(t *testing.T) {
	ctx := context.Background()
	srv, gh := open(t)
	lister := gh.(tools.GitHubReviews)
	pr := srv.AddPullRequest("o/r", "T", "feature", "main")
	states := []string{"COMMENTED", "CHANGES_REQUESTED", "APPROVED", "DISMISSED", "PENDING"}
	for i := range 150 {
		var cs []githubtest.ReviewComment
		if i == 1 {
			cs = []githubtest.ReviewComment{{Path: "a.go", Line: 3, Body: "why?", DiffHunk: "@@ -1 +1,3 @@"}, {Path: "b.go", Line: 7, Side: "LEFT", Body: "gone"}}
		}
		if _, err := srv.AddReview("o/r", pr.Number, fmt.Sprintf("user%d", i), states[i%len(states)], fmt.Sprintf("review %d", i), "abc123", cs); err != nil {
			t.Fatal(err)
		}
	}
	reviews, err := lister.ListReviews(ctx, pr.Number)
	if err != nil || len(reviews) != 150 {
		t.Fatalf("reviews: %d, %v", len(reviews), err)
	}
	r := reviews[1]
	if r.User != "user1" || r.State != "CHANGES_REQUESTED" || r.Body != "review 1" || r.CommitID != "abc123" || r.SubmittedAt.IsZero() ||
		!strings.HasSuffix(r.URL, fmt.Sprintf("/o/r/pull/1#pullrequestreview-%d", r.ID)) || reviews[149].Body != "review 149" {
		t.Fatalf("review 1: %+v; last %+v", r, reviews[149])
	}
	pages := 0
	for _, q := range srv.Requests() {
		if strings.HasSuffix(q.Path, "/reviews") {
			pages++
			if q.Auth != "token "+token {
				t.Fatalf("page %s without the token: %q", q.Query, q.Auth)
			}
		}
	}
	if pages != 2 {
		t.Fatalf("%d pages fetched, want 2", pages)
	}
	comments, err := lister.ListReviewComments(ctx, pr.Number)
	if err != nil || len(comments) != 2 {
		t.Fatalf("comments: %+v, %v", comments, err)
	}
	if c := comments[1]; c.ReviewID != r.ID || c.Path != "b.go" || c.Line != 7 || c.Side != "LEFT" || c.Body != "gone" || c.User != "user1" {
		t.Fatalf("comment: %+v", c)
	}
	srv.Fail(githubtest.Failure{Method: "GET", PathSuffix: "/reviews", Times: 1, Status: 502})
	_, err = lister.ListReviews(ctx, pr.Number)
	var ge *tools.GitHubError
	if !errors.As(err, &ge) || ge.Status != 502 || !ge.Transient() {
		t.Fatalf("502: %v", err)
	}
	if _, err := lister.ListReviews(ctx, 99); !errors.As(err, &ge) || ge.Status != 404 {
		t.Fatalf("no such pull request: %v", err)
	}
}

// TestReviewShapes: the stand-in answers in the REST reference's shapes
// (the fields a client may read), pages by per_page/page with a Link
// header, and refuses a bad per_page as GitHub does.
func TestReviewShapes(t *testing.T) {
	srv := githubtest.New()
	t.Cleanup(srv.Close)
	pr := srv.AddPullRequest("o/r", "T", "feature", "main")
	for i := range 3 {
		srv.AddReview("o/r", pr.Number, "alice", "COMMENTED", "b", "c1", []githubtest.ReviewComment{{Path: "x", Line: i + 1, Body: "c"}})
	}
	get := func(path string) (*http.Response, []map[string]any) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var v []map[string]any
		json.Unmarshal(b, &v)
		return resp, v
	}
	resp, page := get("repos/o/r/pulls/1/reviews?per_page=2")
	if len(page) != 2 || !strings.Contains(resp.Header.Get("Link"), `page=2&per_page=2>; rel="next"`) || !strings.Contains(resp.Header.Get("Link"), `rel="last"`) {
		t.Fatalf("page 1: %d items, Link %q", len(page), resp.Header.Get("Link"))
	}
	for _, k := range []string{"id", "node_id", "user", "body", "state", "html_url", "pull_request_url", "author_association", "_links", "submitted_at", "commit_id"} {
		if _, ok := page[0][k]; !ok {
			t.Errorf("review lacks %q", k)
		}
	}
	if page[0]["user"].(map[string]any)["login"] != "alice" {
		t.Errorf("user %v", page[0]["user"])
	}
	resp, page = get("repos/o/r/pulls/1/reviews?per_page=2&page=2")
	if len(page) != 1 || strings.Contains(resp.Header.Get("Link"), `rel="next"`) || !strings.Contains(resp.Header.Get("Link"), `rel="prev"`) {
		t.Fatalf("page 2: %d items, Link %q", len(page), resp.Header.Get("Link"))
	}
	id := int64(page[0]["id"].(float64))
	_, cs := get(fmt.Sprintf("repos/o/r/pulls/1/reviews/%d/comments", id))
	if len(cs) != 1 {
		t.Fatalf("review comments: %v", cs)
	}
	_, cs = get("repos/o/r/pulls/1/comments")
	if len(cs) != 3 {
		t.Fatalf("pull request comments: %d", len(cs))
	}
	for _, k := range []string{"url", "pull_request_review_id", "id", "diff_hunk", "path", "position", "original_position", "commit_id",
		"original_commit_id", "user", "body", "created_at", "updated_at", "html_url", "line", "original_line", "side", "start_line", "subject_type"} {
		if _, ok := cs[0][k]; !ok {
			t.Errorf("review comment lacks %q", k)
		}
	}
	if resp, _ := get("repos/o/r/pulls/1/reviews?per_page=x"); resp.StatusCode != 422 {
		t.Errorf("per_page=x: %d", resp.StatusCode)
	}
	if resp, _ := get("repos/o/r/pulls/1/reviews/12345/comments"); resp.StatusCode != 404 {
		t.Errorf("no such review: %d", resp.StatusCode)
	}
}

package github_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/github"
	"github.com/gitcodex/git-codex/github/githubtest"
	"github.com/gitcodex/git-codex/tools"
)

// reviewPages is each request for a page of pull request 1's reviews
// since request from: its page, the ETag it sent and the status.
func reviewPages(srv *githubtest.Server, from int) []string {
	var out []string
	for _, q := range srv.Requests()[from:] {
		if strings.HasSuffix(q.Path, "/pulls/1/reviews") {
			out = append(out, fmt.Sprintf("%s %t %d", q.Query, q.IfNoneMatch != "", q.Status))
		}
	}
	return out
}

// TestConditionalReviews: a poll of a pull request's reviews (two pages)
// with nothing new is answered 304 for each page, with the ETags the first
// poll got, and comes back the same; it costs nothing against GitHub's
// rate limit. A new review changes its page's ETag (the other page is
// still 304) and is delivered. The ETags outlive the client: the watcher
// opens one per pass from one Cache. A client of another token does not
// send them (GitHub's ETags are per token), nor does one that Open made
// on its own.
func TestConditionalReviews(t *testing.T) {
	ctx := context.Background()
	srv, _ := open(t)
	cache := github.NewCache()
	pass := func() tools.GitHubReviews {
		gh, err := cache.Open(ctx, tools.GitHubSettings{Dir: t.TempDir(), APIURL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		return gh.(tools.GitHubReviews)
	}
	pr := srv.AddPullRequest("o/r", "T", "feature", "main")
	for i := range 120 {
		if _, err := srv.AddReview("o/r", pr.Number, "bob", "COMMENTED", fmt.Sprintf("review %d", i), "abc", nil); err != nil {
			t.Fatal(err)
		}
	}
	first, err := pass().ListReviews(ctx, pr.Number)
	if err != nil || len(first) != 120 {
		t.Fatalf("first poll: %d reviews, %v", len(first), err)
	}
	if got := reviewPages(srv, 0); !reflect.DeepEqual(got, []string{"per_page=100 false 200", "page=2&per_page=100 false 200"}) {
		t.Fatalf("first poll's requests: %q", got)
	}
	n := len(srv.Requests())
	second, err := pass().ListReviews(ctx, pr.Number)
	if err != nil || !reflect.DeepEqual(second, first) {
		t.Fatalf("second poll: %d reviews (same: %t), %v", len(second), reflect.DeepEqual(second, first), err)
	}
	if got := reviewPages(srv, n); !reflect.DeepEqual(got, []string{"per_page=100 true 304", "page=2&per_page=100 true 304"}) {
		t.Fatalf("second poll's requests: %q", got)
	}
	if srv.NotModified() != 2 || cache.Len() != 2 {
		t.Fatalf("304s: %d; cached answers: %d", srv.NotModified(), cache.Len())
	}

	// a new review: page 2 changes, page 1 does not
	rv, err := srv.AddReview("o/r", pr.Number, "alice", "CHANGES_REQUESTED", "rework it", "def", nil)
	if err != nil {
		t.Fatal(err)
	}
	n = len(srv.Requests())
	third, err := pass().ListReviews(ctx, pr.Number)
	if err != nil || len(third) != 121 || third[120].ID != rv.ID || third[120].Body != "rework it" || !reflect.DeepEqual(third[:120], first) {
		t.Fatalf("third poll: %d reviews, %v", len(third), err)
	}
	if got := reviewPages(srv, n); !reflect.DeepEqual(got, []string{"per_page=100 true 304", "page=2&per_page=100 true 200"}) {
		t.Fatalf("third poll's requests: %q", got)
	}
	n = len(srv.Requests())
	if fourth, err := pass().ListReviews(ctx, pr.Number); err != nil || !reflect.DeepEqual(fourth, third) {
		t.Fatalf("fourth poll: %d reviews, %v", len(fourth), err)
	}
	if got := reviewPages(srv, n); !reflect.DeepEqual(got, []string{"per_page=100 true 304", "page=2&per_page=100 true 304"}) {
		t.Fatalf("fourth poll's requests (the new ETag): %q", got)
	}

	// a failure is the caller's; the remembered answer stays
	srv.Fail(githubtest.Failure{Method: "GET", PathSuffix: "/reviews", Times: 1, Status: http.StatusBadGateway})
	if _, err := pass().ListReviews(ctx, pr.Number); err == nil || !strings.Contains(err.Error(), "502") {
		t.Fatalf("a 502: %v", err)
	}
	n = len(srv.Requests())
	if again, err := pass().ListReviews(ctx, pr.Number); err != nil || !reflect.DeepEqual(again, third) {
		t.Fatalf("after the 502: %d reviews, %v", len(again), err)
	}
	if got := reviewPages(srv, n); !reflect.DeepEqual(got, []string{"per_page=100 true 304", "page=2&per_page=100 true 304"}) {
		t.Fatalf("after the 502: %q", got)
	}

	// a client of its own (Open) has no ETags yet
	gh, err := github.Open(ctx, tools.GitHubSettings{Dir: t.TempDir(), APIURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	n = len(srv.Requests())
	if _, err := gh.(tools.GitHubReviews).ListReviews(ctx, pr.Number); err != nil {
		t.Fatal(err)
	}
	if got := reviewPages(srv, n); !reflect.DeepEqual(got, []string{"per_page=100 false 200", "page=2&per_page=100 false 200"}) {
		t.Fatalf("a client of its own: %q", got)
	}

	// another token: GitHub would not honour the first token's ETags
	const other = "ghp_9876543210abcdefghijABCDEFGHIJ987654"
	srv.RequireToken(other)
	t.Setenv("GH_TOKEN", other)
	n = len(srv.Requests())
	if _, err := pass().ListReviews(ctx, pr.Number); err != nil {
		t.Fatal(err)
	}
	if got := reviewPages(srv, n); !reflect.DeepEqual(got, []string{"per_page=100 false 200", "page=2&per_page=100 false 200"}) {
		t.Fatalf("another token: %q", got)
	}
	for _, q := range srv.Requests() {
		if strings.Contains(q.IfNoneMatch, token) || strings.Contains(q.IfNoneMatch, other) {
			t.Fatalf("a token in an ETag: %q", q.IfNoneMatch)
		}
	}
}

// TestConditionalOtherGETs: every GET is conditional, not only the
// listings: a pull request read twice is one 200 and one 304, and a
// change (a merge) is read as changed.
func TestConditionalOtherGETs(t *testing.T) {
	ctx := context.Background()
	srv, _ := open(t)
	gh, err := github.NewCache().Open(ctx, tools.GitHubSettings{Dir: t.TempDir(), APIURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	pr := srv.AddPullRequest("o/r", "T", "feature", "main")
	for range 2 {
		if p, err := gh.GetPullRequest(ctx, pr.Number); err != nil || p.State != "open" || p.Head != "feature" {
			t.Fatalf("pull request: %+v, %v", p, err)
		}
	}
	if srv.NotModified() != 1 {
		t.Fatalf("304s: %d, want 1", srv.NotModified())
	}
	if _, err := gh.MergePullRequest(ctx, pr.Number, "squash"); err != nil {
		t.Fatal(err)
	}
	if p, err := gh.GetPullRequest(ctx, pr.Number); err != nil || p.State != "closed" || !p.Merged {
		t.Fatalf("after the merge: %+v, %v", p, err)
	}
	if srv.NotModified() != 1 {
		t.Fatalf("304s after the merge: %d, want 1", srv.NotModified())
	}
}

// TestConditionalConcurrent: clients of one cache polling at once (the
// watcher's pass beside a tool call by hand, in one MCP server) each get
// the whole listing, and the cache stays consistent (run with -race).
func TestConditionalConcurrent(t *testing.T) {
	ctx := context.Background()
	srv, _ := open(t)
	cache := github.NewCache()
	pr := srv.AddPullRequest("o/r", "T", "feature", "main")
	for i := range 30 {
		if _, err := srv.AddReview("o/r", pr.Number, "bob", "COMMENTED", fmt.Sprintf("review %d", i), "abc", nil); err != nil {
			t.Fatal(err)
		}
	}
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			gh, err := cache.Open(ctx, tools.GitHubSettings{Dir: t.TempDir(), APIURL: srv.URL})
			if err != nil {
				errs <- err
				return
			}
			for i := range 10 {
				if g == 0 && i == 5 {
					if _, err := srv.AddReview("o/r", pr.Number, "carol", "APPROVED", "late", "abc", nil); err != nil {
						errs <- err
						return
					}
				}
				rs, err := gh.(tools.GitHubReviews).ListReviews(ctx, pr.Number)
				// 30 or, once the late review is in, 31: never stale
				// after it (g 0 added it)
				if err != nil || (len(rs) != 30 && len(rs) != 31) || (g == 0 && i >= 5 && len(rs) != 31) || rs[0].Body != "review 0" {
					errs <- fmt.Errorf("poll %d: %d reviews, %v", i, len(rs), err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if srv.NotModified() == 0 || cache.Len() != 1 {
		t.Fatalf("304s: %d; cached answers: %d", srv.NotModified(), cache.Len())
	}
	final, err := github.Open(ctx, tools.GitHubSettings{Dir: t.TempDir(), APIURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if rs, err := final.(tools.GitHubReviews).ListReviews(ctx, pr.Number); err != nil || len(rs) != 31 {
		t.Fatalf("after: %d reviews, %v", len(rs), err)
	}
}

package github_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/github"
	"github.com/gitcodex/git-codex/github/githubtest"
	"github.com/gitcodex/git-codex/tools"
)

const token = "ghp_0123456789abcdefghijABCDEFGHIJ012345"

// open starts a stand-in and a client of repository o/r pointed at it.
func open(t *testing.T) (*githubtest.Server, tools.GitHub) {
	t.Helper()
	srv := githubtest.New()
	t.Cleanup(srv.Close)
	srv.RequireToken(token)
	t.Setenv("GH_REPO", "o/r")
	t.Setenv("GH_TOKEN", token)
	t.Setenv("GH_CONFIG_DIR", t.TempDir())
	t.Setenv("GH_PATH", "/nonexistent/gh")
	gh, err := github.Open(context.Background(), tools.GitHubSettings{Dir: t.TempDir(), APIURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return srv, gh
}

func TestPullRequests(t *testing.T) {
	ctx := context.Background()
	srv, gh := open(t)
	if gh.Repo() != "o/r" {
		t.Fatalf("repo %q", gh.Repo())
	}
	srv.SetDefaultBranch("o/r", "trunk")
	base, err := gh.DefaultBranch(ctx)
	if err != nil || base != "trunk" {
		t.Fatalf("default branch %q, %v", base, err)
	}
	if _, ok, err := gh.FindPullRequest(ctx, "feature", "trunk"); ok || err != nil {
		t.Fatalf("found a PR before any: %v %v", ok, err)
	}
	pr, err := gh.CreatePullRequest(ctx, tools.NewPullRequest{Title: "T", Body: "B", Head: "feature", Base: "trunk"})
	if err != nil || pr.Number != 1 || pr.Head != "feature" || pr.Base != "trunk" || !strings.HasSuffix(pr.URL, "/o/r/pull/1") || pr.State != "open" {
		t.Fatalf("create: %+v %v", pr, err)
	}
	found, ok, err := gh.FindPullRequest(ctx, "feature", "trunk")
	if err != nil || !ok || found.Number != 1 {
		t.Fatalf("find: %+v %v %v", found, ok, err)
	}
	// a second create is refused as GitHub refuses it
	_, err = gh.CreatePullRequest(ctx, tools.NewPullRequest{Title: "T", Body: "B", Head: "feature", Base: "trunk"})
	var ge *tools.GitHubError
	if !errors.As(err, &ge) || ge.Status != 422 || ge.Transient() || !strings.Contains(ge.Message, "already exists") {
		t.Fatalf("duplicate: %v", err)
	}
	sha, err := gh.MergePullRequest(ctx, 1, "squash")
	if err != nil || len(sha) != 40 {
		t.Fatalf("merge: %q %v", sha, err)
	}
	got, err := gh.GetPullRequest(ctx, 1)
	if err != nil || !got.Merged || got.State != "closed" {
		t.Fatalf("get: %+v %v", got, err)
	}
	if p := srv.PullRequests("o/r"); len(p) != 1 || p[0].Method != "squash" {
		t.Fatalf("server holds %+v", p)
	}
	for _, r := range srv.Requests() {
		if r.Auth != "token "+token {
			t.Fatalf("request %s %s sent auth %q", r.Method, r.Path, r.Auth)
		}
	}
}

func TestIssues(t *testing.T) {
	ctx := context.Background()
	_, gh := open(t)
	i, err := gh.CreateIssue(ctx, tools.NewIssue{Title: "one", Body: "body <!-- m1 -->", Labels: []string{"bug"}})
	if err != nil || i.Number != 1 || !strings.HasSuffix(i.URL, "/o/r/issues/1") {
		t.Fatalf("create: %+v %v", i, err)
	}
	if f, ok, err := gh.FindIssue(ctx, "<!-- m1 -->"); err != nil || !ok || f.Number != 1 {
		t.Fatalf("find: %+v %v %v", f, ok, err)
	}
	if _, ok, err := gh.FindIssue(ctx, "<!-- m2 -->"); err != nil || ok {
		t.Fatalf("found a missing marker: %v %v", ok, err)
	}
}

// TestErrors: every failure is a *tools.GitHubError with GitHub's status
// and message, transient exactly when trying again may cure it.
func TestErrors(t *testing.T) {
	reset := time.Now().Add(90 * time.Second).Truncate(time.Second)
	tests := []struct {
		name      string
		fail      githubtest.Failure
		status    int
		transient bool
		message   string
		retryAt   bool
	}{
		{"401", githubtest.Failure{Status: 401, Message: "Bad credentials"}, 401, false, "Bad credentials", false},
		{"403", githubtest.Failure{Status: 403, Message: "Resource not accessible by integration"}, 403, false, "not accessible", false},
		{"404", githubtest.Failure{Status: 404}, 404, false, "Not Found", false},
		{"422", githubtest.Failure{Status: 422, Message: "Validation Failed"}, 422, false, "Validation Failed", false},
		{"502", githubtest.Failure{Status: 502}, 502, true, "Bad Gateway", false},
		{"rate limit 403", githubtest.Failure{Status: 403, RateLimited: true, Reset: reset}, 403, true, "rate limit", true},
		{"rate limit 429", githubtest.Failure{Status: 429, RateLimited: true, Reset: reset}, 429, true, "rate limit", true},
		{"no answer", githubtest.Failure{Status: 0}, 0, true, "did not answer", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, gh := open(t)
			tt.fail.Times = 1
			srv.Fail(tt.fail)
			_, err := gh.CreatePullRequest(context.Background(), tools.NewPullRequest{Title: "T", Body: "B", Head: "f", Base: "main"})
			var ge *tools.GitHubError
			if !errors.As(err, &ge) {
				t.Fatalf("error %T %v", err, err)
			}
			if ge.Status != tt.status || ge.Transient() != tt.transient || !strings.Contains(ge.Message, tt.message) {
				t.Fatalf("got status %d transient %v message %q", ge.Status, ge.Transient(), ge.Message)
			}
			if tt.retryAt && (ge.RetryAt.IsZero() || ge.RetryAt.Sub(reset).Abs() > 2*time.Second) {
				t.Fatalf("retry at %v, want %v", ge.RetryAt, reset)
			}
			if strings.Contains(ge.Message, token) {
				t.Fatal("the token is in the message")
			}
			if len(srv.PullRequests("o/r")) != 0 {
				t.Fatal("a failed create made a pull request")
			}
		})
	}
}

func TestOpenRefusals(t *testing.T) {
	t.Setenv("GH_CONFIG_DIR", t.TempDir())
	t.Setenv("GH_PATH", "/nonexistent/gh")
	t.Setenv("GH_TOKEN", "")
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("GH_REPO", "")
	ctx := context.Background()
	var ge *tools.GitHubError
	// no origin remote and no GH_REPO
	if _, err := github.Open(ctx, tools.GitHubSettings{Dir: t.TempDir(), APIURL: "http://127.0.0.1:1/"}); !errors.As(err, &ge) || !strings.Contains(ge.Message, "GH_REPO") {
		t.Fatalf("no repository: %v", err)
	}
	t.Setenv("GH_REPO", "o/r")
	if _, err := github.Open(ctx, tools.GitHubSettings{Dir: t.TempDir(), APIURL: "http://127.0.0.1:1/"}); !errors.As(err, &ge) || !strings.Contains(ge.Message, "GH_TOKEN") {
		t.Fatalf("no token: %v", err)
	}
	t.Setenv("GH_TOKEN", token)
	if _, err := github.Open(ctx, tools.GitHubSettings{Dir: t.TempDir(), APIURL: "ftp://x/"}); !errors.As(err, &ge) || !strings.Contains(ge.Message, "api_url") {
		t.Fatalf("bad api url: %v", err)
	}
	// the token is never sent in the clear to another machine (issue 29)
	for _, u := range []string{"http://ghe.example.com/api/v3/", "http://10.0.0.1/", "https://user:pw@ghe.example.com/"} {
		if _, err := github.Open(ctx, tools.GitHubSettings{Dir: t.TempDir(), APIURL: u}); !errors.As(err, &ge) || !strings.Contains(ge.Message, "api_url") {
			t.Fatalf("api url %s: %v", u, err)
		}
	}
	// GitHub down: connection refused is a transient failure with no status
	gh, err := github.Open(ctx, tools.GitHubSettings{Dir: t.TempDir(), APIURL: "http://127.0.0.1:1/"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = gh.DefaultBranch(ctx)
	if !errors.As(err, &ge) || ge.Status != 0 || !ge.Transient() {
		t.Fatalf("down: %v", err)
	}
}

package builtin_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/github"
	"github.com/gitcodex/git-codex/github/githubtest"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/gitcodex/git-codex/tools/work"
)

// restEpicEnv is epicEnv with GitHub reached through go-gh's REST client
// (package github) at a local stand-in of GitHub's REST API.
func restEpicEnv(t *testing.T) (*env, *githubtest.Server) {
	t.Helper()
	srv := githubtest.New()
	t.Cleanup(srv.Close)
	t.Setenv("GH_REPO", "acme/widgets")
	t.Setenv("GH_TOKEN", "test-token")
	t.Setenv("CODEX_GITHUB_API_URL", srv.URL)
	e := newEnv(t)
	gitstatetest.Git(t, e.dir, "commit", "-q", "--allow-empty", "-m", "base")
	gh, err := github.Open(context.Background(), tools.GitHubSettings{Dir: e.dir, APIURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	cat := builtin.Catalog()
	cat.Tools = append(cat.Tools, submitTool(gh))
	reg := tools.NewRegistry(cat)
	e.reg = reg.WithEnv(tools.Env{GitHub: github.Open})
	e.ok(human, "config_set", `{"key":"retry.delay_ms","value":"1"}`)
	e.ok(human, "agent_register", `{"id":"boss","type":"supervisor"}`)
	e.ok(human, "agent_register", `{"id":"w1","type":"worker"}`)
	e.ok(human, "agent_register", `{"id":"w2","type":"worker"}`)
	return e, srv
}

// TestEpicOverGitHubREST: approvals and the epic's pull request through
// go-gh against the stand-in: a squash merge, coded refusals and
// failures that leave the task in REVIEW, and nothing sent twice.
func TestEpicOverGitHubREST(t *testing.T) {
	e, srv := restEpicEnv(t)
	epic := e.newEpic("boss")
	t1, t2 := e.epicTask("boss", epic, "Profile page"), e.epicTask("boss", epic, "Avatar upload")
	e.ok("w1", "task_claim", `{"id":"`+t1+`"}`)
	e.ok("w2", "task_claim", `{"id":"`+t2+`"}`)
	e.ok("w1", "test_submit_pr", `{"task_id":"`+t1+`","head":"codex/w1"}`)
	e.ok("w2", "test_submit_pr", `{"task_id":"`+t2+`","head":"codex/w2"}`)
	n1 := e.taskAt(t1).PR.Number

	failures := []struct {
		name string
		f    githubtest.Failure
		want tools.Code
	}{
		{"no answer", githubtest.Failure{Status: 0}, tools.GitHubUnavailable},
		{"bad token", githubtest.Failure{Status: 401, Message: "Bad credentials"}, tools.GitHubRefused},
		{"not found", githubtest.Failure{Status: 404}, tools.GitHubRefused},
		{"server error", githubtest.Failure{Status: 502}, tools.TransientError},
		{"rate limit", githubtest.Failure{Status: 403, RateLimited: true, Reset: time.Now().Add(time.Hour)}, tools.TransientError},
		{"unmergeable", githubtest.Failure{Method: "PUT", PathSuffix: "/merge", Status: 405, Message: "Pull Request is not mergeable"}, tools.GitHubRefused},
	}
	for _, tc := range failures {
		t.Run(tc.name, func(t *testing.T) {
			tc.f.Times = -1
			srv.Fail(tc.f)
			defer srv.ClearFailures()
			trees, tip := e.workTrees(), e.tip()
			r := e.call("boss", "epic_approve_pr", `{"task_id":"`+t1+`"}`)
			if r.OK || r.Error.Code != tc.want {
				t.Fatalf("got %+v, want %s", r, tc.want)
			}
			if e.workTrees() != trees || e.taskAt(t1).State != work.TaskReview {
				t.Errorf("the failure changed the tasks, epics or comments")
			}
			e.failureRecorded(tip, tc.want)
		})
	}
	for _, pr := range srv.PullRequests("acme/widgets") {
		if pr.Merged {
			t.Fatalf("pull request #%d merged while GitHub failed", pr.Number)
		}
	}

	// GitHub failing twice, then merging: three tries, the two failures
	// in the audit trail
	srv.Fail(githubtest.Failure{Method: "PUT", PathSuffix: "/merge", Status: 502, Times: 2})
	tip := e.tip()
	a := e.ok("boss", "epic_approve_pr", `{"task_id":"`+t1+`"}`)
	trail := e.since(tip, "%(trailers:key=Codex-Error,valueonly)")
	if n := strings.Count(trail, string(tools.TransientError)); n != 2 {
		t.Errorf("%d failed tries in the audit trail, want 2:\n%s", n, trail)
	}
	if a["merged"] != true || a["merge_commit"] == "" || a["state"] != work.TaskCompleted {
		t.Fatalf("approve = %v", a)
	}
	merges := 0
	for _, pr := range srv.PullRequests("acme/widgets") {
		if pr.Number == n1 && (!pr.Merged || pr.Method != "squash") {
			t.Errorf("pull request #%d on the server: %+v", n1, pr)
		}
		if pr.Merged {
			merges++
		}
	}
	for _, r := range srv.Requests() {
		if r.Auth != "token test-token" && r.Auth != "Bearer test-token" {
			t.Errorf("request %s %s sent Authorization %q", r.Method, r.Path, r.Auth)
		}
	}
	if merges != 1 {
		t.Errorf("%d pull requests merged, want 1", merges)
	}
	if in := e.subjectsOf("w2"); len(in) != 1 || !strings.HasPrefix(in[0], "Rebase Required") {
		t.Errorf("w2's inbox = %q", in)
	}

	e.ok("boss", "epic_approve_pr", `{"task_id":"`+t2+`"}`)
	// the epic's pull request: a failure first, then once, and found again
	srv.Fail(githubtest.Failure{Method: "POST", PathSuffix: "/pulls", Status: 422, Message: "Validation Failed", Times: 1})
	if r := e.call("boss", "epic_create_epic_pr", `{}`); r.OK || r.Error.Code != tools.GitHubRefused {
		t.Fatalf("epic pr with GitHub refusing: %+v", r)
	}
	p := e.ok("boss", "epic_create_epic_pr", `{}`)
	if p["state"] != work.EpicCompleted || p["branch"] != "epic/"+epic {
		t.Fatalf("epic pr = %v", p)
	}
	var epicPRs int
	for _, pr := range srv.PullRequests("acme/widgets") {
		if pr.Head == "epic/"+epic {
			epicPRs++
			if pr.Base != "main" || !strings.HasPrefix(pr.Title, "[Epic] ") {
				t.Errorf("epic pull request on the server: %+v", pr)
			}
		}
	}
	if epicPRs != 1 {
		t.Errorf("%d epic pull requests on the server, want 1", epicPRs)
	}
}

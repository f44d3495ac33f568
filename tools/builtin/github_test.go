package builtin_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/github"
	"github.com/gitcodex/git-codex/github/githubtest"
	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/gitcodex/git-codex/tools/forge"
	"github.com/gitcodex/git-codex/tools/work"
)

// ghToken is shaped like a real token, so that the secret checks would
// catch it anywhere it leaked.
const ghToken = "ghp_TESTtokenTESTtokenTESTtokenTESTtoken12"

// withGitHub points e's registry at a fresh stand-in of GitHub serving
// repository o/r, with retries 1 ms apart; the caller's branch is feature.
// A coding agent c1 reporting to supervisor s1 holds a task.
func withGitHub(t *testing.T) (*env, *githubtest.Server, string) {
	t.Helper()
	srv := githubtest.New()
	t.Cleanup(srv.Close)
	srv.RequireToken(ghToken)
	t.Setenv("GH_REPO", "o/r")
	t.Setenv("GH_TOKEN", ghToken)
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("GH_CONFIG_DIR", t.TempDir())
	t.Setenv("GH_PATH", "/nonexistent/gh")
	t.Setenv("CODEX_GITHUB_API_URL", "")
	e := newEnv(t)
	e.reg = builtin.Registry().WithEnv(tools.Env{GitHub: github.Open})
	gitstatetest.Git(t, e.dir, "symbolic-ref", "HEAD", "refs/heads/feature")
	e.ok(human, "config_set", fmt.Sprintf(`{"key":"github.api_url","value":%q}`, srv.URL))
	e.ok(human, "config_set", `{"key":"retry.delay_ms","value":"1"}`)
	e.ok(human, "agent_register", `{"id":"s1","type":"supervisor"}`)
	e.ok(human, "agent_register", `{"id":"c1","type":"coding","supervisor":"s1"}`)
	task := e.newTask(human, "the work")
	e.ok("c1", "task_claim", fmt.Sprintf(`{"id":%q}`, task))
	return e, srv, task
}

func (e *env) githubCall(id string) forge.GitHubCall {
	e.t.Helper()
	var g forge.GitHubCall
	err := e.st.View(e.t.Context(), func(s *gitstate.Snapshot) error {
		return s.Get("github/"+gitstate.Fanout(id)+"/"+id+".json", &g)
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return g
}

func (e *env) agentAt(id string) tools.Agent {
	e.t.Helper()
	var a tools.Agent
	err := e.st.View(e.t.Context(), func(s *gitstate.Snapshot) error {
		return s.Get("agents/"+id+".json", &a)
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

// inbox is the subjects of mail to recipient ("human" for the people).
func (e *env) inbox(caller string) []string {
	e.t.Helper()
	r := e.ok(caller, "mail_list_inbox", `{"include_read":true}`)
	var out []string
	for _, m := range r["mails"].([]any) {
		out = append(out, m.(map[string]any)["subject"].(string))
	}
	return out
}

func count(reqs []githubtest.Request, method, suffix string) int {
	n := 0
	for _, r := range reqs {
		if r.Method == method && strings.HasSuffix(r.Path, suffix) {
			n++
		}
	}
	return n
}

const prArgs = `{"title":"Add the thing","description":"It does the thing."}`

func TestCreatePullRequestRecordsItOnTaskAndInstance(t *testing.T) {
	e, srv, task := withGitHub(t)
	out := e.ok("c1", "create_pull_request", prArgs)
	if out["pr_number"].(float64) != 1 || !strings.HasSuffix(out["pr_url"].(string), "/o/r/pull/1") || out["branch_name"] != "feature" ||
		out["base_branch"] != "main" || out["task_id"] != task {
		t.Fatalf("out = %v", out)
	}
	prs := srv.PullRequests("o/r")
	if len(prs) != 1 || prs[0].Head != "feature" || prs[0].Base != "main" || prs[0].Title != "Add the thing" || prs[0].Body != "It does the thing." {
		t.Fatalf("GitHub holds %+v", prs)
	}
	tk := e.taskAt(task)
	if tk.State != work.TaskReview || tk.PR == nil || tk.PR.Number != 1 || tk.SubmittedAt == nil {
		t.Fatalf("task %+v", tk)
	}
	if a := e.agentAt("c1"); a.PR == nil || a.PR.Number != 1 {
		t.Fatalf("instance %+v", a)
	}
	g := e.githubCall(out["call_id"].(string))
	if g.State != forge.GitHubDone || g.Attempts != 1 || g.PR.Number != 1 || g.Repo != "o/r" {
		t.Fatalf("call record %+v", g)
	}
	// asked again: the open pull request is found, not opened twice
	again := e.ok("c1", "create_pull_request", prArgs)
	if again["pr_number"].(float64) != 1 || len(srv.PullRequests("o/r")) != 1 || count(srv.Requests(), "POST", "/pulls") != 1 {
		t.Fatalf("second call: %v; %d PRs", again, len(srv.PullRequests("o/r")))
	}
	// base_branch named
	srv.SetDefaultBranch("o/r", "trunk")
	if out := e.ok("c1", "create_pull_request", `{"title":"t","description":"d","base_branch":"release"}`); out["base_branch"] != "release" || out["pr_number"].(float64) != 2 {
		t.Fatalf("named base: %v", out)
	}
}

// TestGitHubFailures: every way GitHub fails is a coded error; nothing is
// recorded on the task or instance, no pull request is made, and a call
// that may yet go through stays PENDING until github_retry replays it,
// once.
func TestGitHubFailures(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(*env, *githubtest.Server)
		code    tools.Code
		state   string
		message string
	}{
		{"401", func(_ *env, s *githubtest.Server) {
			s.Fail(githubtest.Failure{Times: -1, Status: 401, Message: "Bad credentials"})
		}, tools.GitHubRefused, forge.GitHubFailed, "Bad credentials"},
		{"403", func(_ *env, s *githubtest.Server) {
			s.Fail(githubtest.Failure{Times: -1, Status: 403, Message: "Resource not accessible by integration"})
		}, tools.GitHubRefused, forge.GitHubFailed, "not accessible"},
		{"404", func(_ *env, s *githubtest.Server) { s.Fail(githubtest.Failure{Times: -1, Status: 404}) }, tools.GitHubRefused, forge.GitHubFailed, "Not Found"},
		{"422", func(_ *env, s *githubtest.Server) {
			s.Fail(githubtest.Failure{Method: "POST", Times: -1, Status: 422, Message: "Validation Failed"})
		}, tools.GitHubRefused, forge.GitHubFailed, "Validation Failed"},
		{"5xx", func(_ *env, s *githubtest.Server) { s.Fail(githubtest.Failure{Times: -1, Status: 502}) }, tools.TransientError, forge.GitHubPending, "Bad Gateway"},
		{"rate limit", func(_ *env, s *githubtest.Server) {
			s.Fail(githubtest.Failure{Times: -1, Status: 403, RateLimited: true, Reset: time.Now()})
		}, tools.TransientError, forge.GitHubPending, "rate limit"},
		{"rate limit far off", func(_ *env, s *githubtest.Server) {
			s.Fail(githubtest.Failure{Times: -1, Status: 429, RateLimited: true, Reset: time.Now().Add(time.Hour)})
		}, tools.TransientError, forge.GitHubPending, "rate limit"},
		{"no answer", func(_ *env, s *githubtest.Server) { s.Fail(githubtest.Failure{Times: -1, Status: 0}) }, tools.GitHubUnavailable, forge.GitHubPending, "did not answer"},
		{"no token", func(*env, *githubtest.Server) { t.Setenv("GH_TOKEN", "") }, tools.GitHubUnavailable, forge.GitHubPending, "GH_TOKEN"},
		{"no repository", func(*env, *githubtest.Server) { t.Setenv("GH_REPO", "") }, tools.GitHubUnavailable, forge.GitHubPending, "GH_REPO"},
		{"no client", func(e *env, _ *githubtest.Server) { e.reg = builtin.Registry() }, tools.GitHubUnavailable, forge.GitHubPending, "no GitHub client"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, srv, task := withGitHub(t)
			tt.setup(e, srv)
			r := e.call("c1", "create_pull_request", prArgs)
			if r.OK || r.Error.Code != tt.code || !strings.Contains(r.Error.Message, tt.message) {
				t.Fatalf("got %+v", r)
			}
			id, _ := r.Error.Details["call_id"].(string)
			g := e.githubCall(id)
			if g.State != tt.state || g.LastCode != tt.code || g.PR != nil {
				t.Fatalf("record %+v", g)
			}
			if tk := e.taskAt(task); tk.State != work.TaskInProgress || tk.PR != nil || tk.SubmittedAt != nil {
				t.Fatalf("task half-recorded: %+v", tk)
			}
			if a := e.agentAt("c1"); a.PR != nil {
				t.Fatalf("instance half-recorded: %+v", a)
			}
			if len(srv.PullRequests("o/r")) != 0 {
				t.Fatal("a pull request was made")
			}
			// the error's message is in the audit record, not only its code
			trail := gitstatetest.Git(t, e.dir, "log", "-3", "--format=%(trailers:key=Codex-Error,valueonly,separator=)|%(trailers:key=Codex-Message,valueonly,separator=)", r.Commit)
			if !strings.Contains(trail, string(tt.code)+"|") || !strings.Contains(trail, tt.message) {
				t.Fatalf("the failure is not in the audit trail with its message:\n%s", trail)
			}
			if tt.state != forge.GitHubPending {
				if rr := e.call(human, "github_retry", fmt.Sprintf(`{"id":%q}`, id)); rr.OK || rr.Error.Code != tools.InvalidInput {
					t.Fatalf("retry of a FAILED call: %+v", rr)
				}
				return
			}
			// GitHub is back: the replay makes it, once
			srv.ClearFailures()
			e.reg = builtin.Registry().WithEnv(tools.Env{GitHub: github.Open})
			t.Setenv("GH_TOKEN", ghToken)
			t.Setenv("GH_REPO", "o/r")
			out := e.ok(human, "github_retry", `{}`)
			if out["count"].(float64) != 1 {
				t.Fatalf("retry: %v", out)
			}
			if g := e.githubCall(id); g.State != forge.GitHubDone || g.PR == nil || g.PR.Number != 1 {
				t.Fatalf("after retry: %+v", g)
			}
			if tk := e.taskAt(task); tk.State != work.TaskReview || tk.PR == nil {
				t.Fatalf("task after retry: %+v", tk)
			}
			if out := e.ok(human, "github_retry", `{}`); out["count"].(float64) != 0 || len(srv.PullRequests("o/r")) != 1 {
				t.Fatalf("second retry: %v; %d PRs", out, len(srv.PullRequests("o/r")))
			}
		})
	}
}

// TestRetryTwiceThenSucceed: a server that fails twice then answers: three
// tries, the two failures in the audit trail, no escalation.
func TestRetryTwiceThenSucceed(t *testing.T) {
	e, srv, _ := withGitHub(t)
	srv.Fail(githubtest.Failure{Method: "POST", PathSuffix: "/pulls", Times: 2, Status: 503})
	out := e.ok("c1", "create_pull_request", prArgs)
	if out["pr_number"].(float64) != 1 || count(srv.Requests(), "POST", "/pulls") != 3 || len(srv.PullRequests("o/r")) != 1 {
		t.Fatalf("out %v", out)
	}
	if g := e.githubCall(out["call_id"].(string)); g.Attempts != 3 || g.State != forge.GitHubDone {
		t.Fatalf("record %+v", g)
	}
	trail := e.trail("%(trailers:key=Codex-Error,valueonly,separator=)|%(trailers:key=Codex-Message,valueonly,separator=)")
	for _, want := range []string{"TRANSIENT_ERROR|try 1 of 3 failed: GitHub answered 503", "TRANSIENT_ERROR|try 2 of 3 failed: GitHub answered 503"} {
		if !strings.Contains(trail, want) {
			t.Fatalf("audit trail lacks %q:\n%s", want, trail)
		}
	}
	if got := e.inbox("s1"); len(got) != 0 {
		t.Fatalf("supervisor mailed: %v", got)
	}
}

// TestRetryAlwaysFails: a server that always fails: retry.max_attempts
// tries, TRANSIENT_ERROR, the supervisor mailed once, and repeated
// failures folded into that mail; a critical tool mails the people.
func TestRetryAlwaysFails(t *testing.T) {
	e, srv, _ := withGitHub(t)
	e.ok(human, "config_set", `{"key":"retry.max_attempts","value":"4"}`)
	srv.Fail(githubtest.Failure{Times: -1, Status: 500})
	r := e.call("c1", "create_pull_request", prArgs)
	if r.OK || r.Error.Code != tools.TransientError || r.Error.Details["attempts"] != 4 {
		t.Fatalf("got %+v", r)
	}
	if n := count(srv.Requests(), "GET", "repos/o/r"); n != 4 {
		t.Fatalf("%d tries, want 4", n)
	}
	mails := e.inbox("s1")
	if len(mails) != 1 || mails[0] != "create_pull_request failed: TRANSIENT_ERROR" {
		t.Fatalf("supervisor's mail: %v", mails)
	}
	// the same failure again, twice: folded, no new mail
	for range 2 {
		if r := e.call("c1", "create_pull_request", prArgs); r.OK || r.Error.Code != tools.TransientError {
			t.Fatalf("got %+v", r)
		}
	}
	if mails := e.inbox("s1"); len(mails) != 1 {
		t.Fatalf("not folded: %v", mails)
	}
	var esc []work.Escalation
	e.st.View(t.Context(), func(s *gitstate.Snapshot) error {
		out := gitstatetest.Git(t, e.dir, "ls-tree", "-r", "--name-only", gitstate.RefState, "escalations/")
		for _, p := range strings.Fields(out) {
			var x work.Escalation
			if err := s.Get(p, &x); err != nil {
				t.Fatal(err)
			}
			esc = append(esc, x)
		}
		return nil
	})
	if len(esc) != 1 || esc[0].Folded != 2 || esc[0].To != "s1" {
		t.Fatalf("escalations %+v", esc)
	}
	// a failure of another kind is mailed
	srv.ClearFailures()
	srv.Fail(githubtest.Failure{Times: -1, Status: 401, Message: "Bad credentials"})
	e.call("c1", "create_pull_request", prArgs)
	if mails := e.inbox("s1"); len(mails) != 2 || mails[0] != "create_pull_request failed: GITHUB_REFUSED" {
		t.Fatalf("supervisor's mail: %v", mails)
	}
	// critical: the people hear, with CRITICAL first
	e.ok(human, "config_set", `{"key":"escalation.critical","value":"create_pull_request"}`)
	e.call("c1", "create_pull_request", prArgs)
	people := e.inbox(human)
	if len(people) != 1 || people[0] != "CRITICAL: create_pull_request failed: GITHUB_REFUSED" {
		t.Fatalf("people's mail: %v", people)
	}
	// the calls from the branch while GitHub failed were one record,
	// retried in place and FAILED once GitHub refused; the critical call
	// after it is a second
	if out := e.ok(human, "github_retry", `{"list":true}`); out["count"].(float64) != 0 {
		t.Fatalf("pending: %v", out)
	}
	if recs := strings.Fields(gitstatetest.Git(t, e.dir, "ls-tree", "-r", "--name-only", gitstate.RefState, "github/")); len(recs) != 2 {
		t.Fatalf("records: %v", recs)
	}
}

// TestCreateIssues: issues opened with their numbers; a replay after a
// failure half-way opens only those not yet opened.
func TestCreateIssues(t *testing.T) {
	e, srv, _ := withGitHub(t)
	e.ok(human, "agent_register", `{"id":"p1","type":"planning"}`)
	args := `{"issues":[{"title":"one","body":"first"},{"title":"two","body":"second","labels":["bug"]},{"title":"three","body":"third"}]}`
	// GitHub stops answering after the first issue
	srv.Fail(githubtest.Failure{Method: "POST", PathSuffix: "/issues", After: 1, Times: -1, Status: 0})
	r := e.call("p1", "create_issues", args)
	if r.OK || r.Error.Code != tools.GitHubUnavailable {
		t.Fatalf("got %+v", r)
	}
	id := r.Error.Details["call_id"].(string)
	if g := e.githubCall(id); g.State != forge.GitHubPending || g.Issues[0].Number != 1 || g.Issues[1].Number != 0 {
		t.Fatalf("record %+v", g)
	}
	srv.ClearFailures()
	out := e.ok("p1", "github_retry", `{}`)
	if out["count"].(float64) != 1 {
		t.Fatalf("retry %v", out)
	}
	issues := srv.Issues("o/r")
	if len(issues) != 3 || issues[0].Title != "one" || issues[1].Title != "two" || issues[2].Title != "three" || issues[1].Labels[0] != "bug" {
		t.Fatalf("GitHub holds %+v", issues)
	}
	g := e.githubCall(id)
	if g.State != forge.GitHubDone || g.Issues[0].Number != 1 || g.Issues[1].Number != 2 || g.Issues[2].Number != 3 || !strings.HasSuffix(g.Issues[2].URL, "/o/r/issues/3") {
		t.Fatalf("record %+v", g)
	}
	// a fresh call answers with numbers and URLs
	res := e.ok("p1", "create_issues", `{"issues":[{"title":"four","body":"fourth"}]}`)
	b, _ := json.Marshal(res["issues"])
	if res["count"].(float64) != 1 || !strings.Contains(string(b), `"number":4`) {
		t.Fatalf("out %v", res)
	}
	// workers may not open issues; bad input is refused before anything
	e.ok(human, "agent_register", `{"id":"w1","type":"worker"}`)
	e.refused("w1", "create_issues", `{"issues":[{"title":"x","body":"y"}]}`, tools.PermissionDenied)
	e.refused("p1", "create_issues", `{"issues":[]}`, tools.InvalidInput)
	e.refused("p1", "create_issues", `{"issues":[{"title":"","body":"y"}]}`, tools.InvalidInput)
	if len(srv.Issues("o/r")) != 4 {
		t.Fatal("a refused call opened an issue")
	}
}

// TestGitHubTokenNeverStored: the token reaches GitHub and nowhere else:
// no object in the repository (refs, trailers, records, mail) holds it.
func TestGitHubTokenNeverStored(t *testing.T) {
	e, srv, _ := withGitHub(t)
	srv.Fail(githubtest.Failure{Times: 1, Status: 401, Message: "Bad credentials"})
	e.call("c1", "create_pull_request", prArgs)
	srv.Fail(githubtest.Failure{Times: -1, Status: 502})
	e.call("c1", "create_pull_request", `{"title":"t","description":"d","base_branch":"other"}`)
	srv.ClearFailures()
	e.ok("c1", "create_pull_request", prArgs)
	e.ok(human, "github_retry", `{}`)
	seen := false
	for _, r := range srv.Requests() {
		seen = seen || r.Auth == "token "+ghToken
	}
	if !seen {
		t.Fatal("the token never reached GitHub")
	}
	cmd := exec.Command("git", "cat-file", "--batch-all-objects", "--batch", "--unordered")
	cmd.Dir = e.dir
	all, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 1000 || strings.Contains(string(all), ghToken) || strings.Contains(string(all), ghToken[4:]) {
		t.Fatalf("the token is in the repository (or nothing was read: %d bytes)", len(all))
	}
}

// TestNextCallReplaysPending: a call that waited for GitHub goes with the
// next call that gets through.
func TestNextCallReplaysPending(t *testing.T) {
	e, srv, _ := withGitHub(t)
	e.ok(human, "agent_register", `{"id":"p1","type":"planning"}`)
	t.Setenv("GH_TOKEN", "")
	r := e.call("p1", "create_issues", `{"issues":[{"title":"waited","body":"b"}]}`)
	if r.OK || r.Error.Code != tools.GitHubUnavailable {
		t.Fatalf("got %+v", r)
	}
	waiting := r.Error.Details["call_id"].(string)
	t.Setenv("GH_TOKEN", ghToken)
	e.ok("c1", "create_pull_request", prArgs)
	if g := e.githubCall(waiting); g.State != forge.GitHubDone || g.Issues[0].Number == 0 {
		t.Fatalf("the waiting call: %+v", g)
	}
	if is := srv.Issues("o/r"); len(is) != 1 || is[0].Title != "waited" {
		t.Fatalf("issues %+v", is)
	}
}

// TestConcurrentReplaysSendOnce: replays racing for the same PENDING
// calls open each issue once.
func TestConcurrentReplaysSendOnce(t *testing.T) {
	e, srv, _ := withGitHub(t)
	e.ok(human, "agent_register", `{"id":"p1","type":"planning"}`)
	t.Setenv("GH_TOKEN", "")
	for i := range 3 {
		e.call("p1", "create_issues", fmt.Sprintf(`{"issues":[{"title":"i%d","body":"b"},{"title":"j%d","body":"b"}]}`, i, i))
	}
	t.Setenv("GH_TOKEN", ghToken)
	done := make(chan tools.Result)
	for range 4 {
		go func() {
			done <- e.reg.CallAs(t.Context(), e.st, tools.Origin{ID: human}, "github_retry", json.RawMessage(`{}`))
		}()
	}
	for range 4 {
		<-done
	}
	e.ok(human, "github_retry", `{}`) // whatever a busy mark turned away
	if is := srv.Issues("o/r"); len(is) != 6 {
		t.Fatalf("%d issues opened for 6 asked: %+v", len(is), is)
	}
	if out := e.ok(human, "github_retry", `{"list":true}`); out["count"].(float64) != 0 {
		t.Fatalf("still pending: %v", out)
	}
}

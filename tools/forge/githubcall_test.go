package forge_test

import (
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/github"
	"github.com/gitcodex/git-codex/github/githubtest"
	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/forge"
)

const prArgs = `{"op":"create_pull_request","head":"feature","title":"Add the thing","task":"t-0000000000000001"}`

// TestMakeRetriesTransientFailures: each failure GitHub may get over (no
// answer, 5xx, a rate limit whose reset has come) is tried again, up to
// retry.max_attempts tries; each failed try is one audit commit on the
// call (TRANSIENT_ERROR, its try and GitHub's answer), and the call ends
// DONE with every try counted, the branch pushed, one pull request made,
// and its outcome on the task handed to the TaskOutcome.
func TestMakeRetriesTransientFailures(t *testing.T) {
	for _, tt := range []struct {
		name    string
		failure githubtest.Failure
		message string
	}{
		{"500", githubtest.Failure{Status: 500}, "GitHub answered 500"},
		{"502", githubtest.Failure{Status: 502}, "GitHub answered 502"},
		{"503", githubtest.Failure{Status: 503}, "GitHub answered 503"},
		{"504", githubtest.Failure{Status: 504}, "GitHub answered 504"},
		{"no answer", githubtest.Failure{Status: 0}, "did not answer"},
		{"403 rate limit", githubtest.Failure{Status: 403, RateLimited: true, Reset: time.Now()}, "rate limit"},
		{"429 rate limit", githubtest.Failure{Status: 429, RateLimited: true, Reset: time.Now()}, "rate limit"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			f := tt.failure
			f.Method, f.PathSuffix, f.Times = "POST", "/pulls", 2
			e.srv.Fail(f)
			r := e.ok("github_call", prArgs)
			g := e.made(r)
			if g.State != forge.GitHubDone || g.Attempts != 3 || g.PR == nil || g.PR.Number != 1 || g.Repo != "o/r" || g.LastCode != "" || g.LastError != "" {
				t.Fatalf("record %+v", g)
			}
			if n := count(e.srv.Requests(), "POST", "/pulls"); n != 3 || len(e.srv.PullRequests("o/r")) != 1 {
				t.Fatalf("%d tries, %d pull requests", n, len(e.srv.PullRequests("o/r")))
			}
			tries := e.tries(g.ID)
			if len(tries) != 2 || !strings.HasPrefix(tries[0], "TRANSIENT_ERROR|try 1 of 3 failed: ") || !strings.HasPrefix(tries[1], "TRANSIENT_ERROR|try 2 of 3 failed: ") ||
				!strings.Contains(tries[0], tt.message) {
				t.Fatalf("tries in the audit trail: %q", tries)
			}
			// the outcome is one commit that follows the intent's
			follows := e.trail("%(trailers:key=Codex-Follows,valueonly,separator=)")[0]
			intent := e.trail("%H|%(trailers:key=Codex-Result,valueonly,separator=)|%s")
			if follows == "" || !strings.Contains(strings.Join(intent, "\n"), follows+"|ok|github_call: ") {
				t.Fatalf("outcome follows %q; trail %q", follows, intent)
			}
			if got := gitstatetest.Git(t, e.dir, "--git-dir", e.origin, "rev-parse", "refs/heads/feature"); got != gitstatetest.Git(t, e.dir, "rev-parse", "refs/heads/feature") {
				t.Fatalf("origin's feature is %s", got)
			}
			if want := g.ID + " t-0000000000000001 " + human; len(e.outcomes) != 1 || e.outcomes[0] != want {
				t.Fatalf("task outcomes %q, want %q", e.outcomes, want)
			}
		})
	}
}

// TestMakeStopsAtRefusals: GitHub's refusals (401, 403, 404, 422) are
// not tried again: one try, GITHUB_REFUSED with GitHub's status and
// message and a hint, the call FAILED, nothing on the task; a replay of
// a FAILED call sends nothing.
func TestMakeStopsAtRefusals(t *testing.T) {
	for _, tt := range []struct {
		status  int
		message string
		hint    string
	}{
		{401, "Bad credentials", "GH_TOKEN"},
		{403, "Resource not accessible by integration", "repo scope"},
		{404, "Not Found", "check the repository"},
		{422, "Validation Failed", "Validation Failed"},
	} {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			e := newTestEnv(t)
			e.ok("config_set", `{"key":"retry.max_attempts","value":"4"}`)
			e.srv.Fail(githubtest.Failure{Method: "POST", PathSuffix: "/pulls", Times: -1, Status: tt.status, Message: tt.message})
			r := e.call("github_call", prArgs)
			if r.OK || r.Error.Code != tools.GitHubRefused || !strings.Contains(r.Error.Message, tt.message) || !strings.Contains(r.Error.Message, tt.hint) ||
				r.Error.Details["status"] != tt.status {
				t.Fatalf("got %+v", r)
			}
			g := e.made(r)
			if g.State != forge.GitHubFailed || g.Attempts != 1 || g.LastCode != tools.GitHubRefused || !strings.Contains(g.LastError, tt.message) || g.PR != nil {
				t.Fatalf("record %+v", g)
			}
			if n := count(e.srv.Requests(), "POST", "/pulls"); n != 1 {
				t.Fatalf("%d tries of a refusal", n)
			}
			if tries := e.tries(g.ID); len(tries) != 0 || len(e.outcomes) != 0 {
				t.Fatalf("tries %q, task outcomes %q", tries, e.outcomes)
			}
			before := len(e.srv.Requests())
			if g := e.made(e.ok("github_replay", fmt.Sprintf(`{"id":%q}`, g.ID))); g.State != forge.GitHubFailed || len(e.srv.Requests()) != before {
				t.Fatalf("replay of a FAILED call: %+v, %d requests", g, len(e.srv.Requests())-before)
			}
		})
	}
}

// TestMakeGivesUp: a call that keeps failing is tried retry.max_attempts
// times and kept PENDING with its last failure (TRANSIENT_ERROR, or
// GITHUB_UNAVAILABLE when GitHub never answered); a replay once GitHub is
// back makes it, once.
func TestMakeGivesUp(t *testing.T) {
	for _, tt := range []struct {
		name    string
		status  int
		code    tools.Code
		message string
	}{
		{"500", 500, tools.TransientError, "create_pull_request failed 4 time(s): GitHub answered 500"},
		{"no answer", 0, tools.GitHubUnavailable, "tried 4 time(s)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.ok("config_set", `{"key":"retry.max_attempts","value":"4"}`)
			e.srv.Fail(githubtest.Failure{Method: "POST", PathSuffix: "/pulls", Times: -1, Status: tt.status})
			r := e.call("github_call", prArgs)
			if r.OK || r.Error.Code != tt.code || !strings.Contains(r.Error.Message, tt.message) || r.Error.Details["attempts"] != 4 || r.Error.Details["status"] != tt.status {
				t.Fatalf("got %+v", r)
			}
			g := e.made(r)
			if g.State != forge.GitHubPending || g.Attempts != 4 || g.LastCode != tt.code || !strings.Contains(g.LastError, tt.message) || g.PR != nil {
				t.Fatalf("record %+v", g)
			}
			if n := count(e.srv.Requests(), "POST", "/pulls"); n != 4 {
				t.Fatalf("%d tries, want 4", n)
			}
			if tries := e.tries(g.ID); len(tries) != 3 || !strings.HasPrefix(tries[2], "TRANSIENT_ERROR|try 3 of 4 failed: ") {
				t.Fatalf("tries in the audit trail: %q", tries)
			}
			if last := e.trail("%(trailers:key=Codex-Target,valueonly,separator=)|%(trailers:key=Codex-Error,valueonly,separator=)")[0]; last != g.ID+"|"+string(tt.code) {
				t.Fatalf("the outcome's commit: %q", last)
			}
			if len(e.outcomes) != 0 {
				t.Fatalf("task outcomes %q", e.outcomes)
			}
			e.srv.ClearFailures()
			g = e.made(e.ok("github_replay", fmt.Sprintf(`{"id":%q}`, g.ID)))
			if g.State != forge.GitHubDone || g.Attempts != 5 || g.PR == nil || g.LastCode != "" {
				t.Fatalf("after the replay: %+v", g)
			}
			if len(e.srv.PullRequests("o/r")) != 1 || len(e.outcomes) != 1 {
				t.Fatalf("%d pull requests, task outcomes %q", len(e.srv.PullRequests("o/r")), e.outcomes)
			}
		})
	}
}

// TestMakeBacksOff: the waits between tries double from retry.delay_ms up
// to retry.max_delay_ms, exactly with retry.jitter off, shortened by at
// most half with it on; each try's audit record says its wait.
func TestMakeBacksOff(t *testing.T) {
	for _, jitter := range []string{"off", "on"} {
		t.Run("jitter "+jitter, func(t *testing.T) {
			e := newTestEnv(t)
			for k, v := range map[string]string{"retry.max_attempts": "4", "retry.delay_ms": "40", "retry.max_delay_ms": "100", "retry.jitter": jitter} {
				e.ok("config_set", fmt.Sprintf(`{"key":%q,"value":%q}`, k, v))
			}
			e.srv.Fail(githubtest.Failure{Method: "POST", PathSuffix: "/pulls", Times: -1, Status: 503})
			start := time.Now()
			r := e.call("github_call", prArgs)
			took := time.Since(start)
			if r.OK || r.Error.Code != tools.TransientError {
				t.Fatalf("got %+v", r)
			}
			tries := e.tries(e.made(r).ID)
			if len(tries) != 3 {
				t.Fatalf("tries %q", tries)
			}
			var total time.Duration
			for i, full := range []time.Duration{40 * time.Millisecond, 80 * time.Millisecond, 100 * time.Millisecond} {
				_, s, _ := strings.Cut(tries[i], "; trying again in ")
				wait, err := time.ParseDuration(s)
				if err != nil {
					t.Fatalf("try %d: %q: %v", i+1, tries[i], err)
				}
				if jitter == "off" && wait != full || jitter == "on" && (wait > full || wait < full/2) {
					t.Errorf("wait after try %d is %s; the full wait is %s, jitter %s", i+1, wait, full, jitter)
				}
				total += wait
			}
			if took < total {
				t.Errorf("the call took %s, less than its waits (%s)", took, total)
			}
		})
	}
}

// TestMakeWaitsForARateLimit: a rate limit's reset (Retry-After on a 429,
// X-RateLimit-Reset on a 403 with no requests left) is waited for before
// the next try, however short retry.delay_ms; a reset further off than a
// retry waits for ends the tries at once, the call PENDING with the time
// GitHub gave (retry_at).
func TestMakeWaitsForARateLimit(t *testing.T) {
	for _, status := range []int{429, 403} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			e := newTestEnv(t)
			// a reset 4 s off: the push and reads before the POST may take
			// a while on a loaded machine, and GitHub's times are whole seconds
			e.srv.Fail(githubtest.Failure{Method: "POST", PathSuffix: "/pulls", Times: 1, Status: status, RateLimited: true, Reset: time.Now().Add(4 * time.Second)})
			start := time.Now()
			g := e.made(e.ok("github_call", prArgs))
			took := time.Since(start)
			if g.State != forge.GitHubDone || g.Attempts != 2 {
				t.Fatalf("record %+v", g)
			}
			tries := e.tries(g.ID)
			if len(tries) != 1 {
				t.Fatalf("tries %q", tries)
			}
			_, s, _ := strings.Cut(tries[0], "; trying again in ")
			wait, err := time.ParseDuration(s)
			if err != nil || wait < 700*time.Millisecond || wait > 4*time.Second || took < wait {
				t.Fatalf("waited %s (%q, %v); the call took %s", wait, tries[0], err, took)
			}
		})
	}
	t.Run("far off", func(t *testing.T) {
		e := newTestEnv(t)
		reset := time.Now().Add(time.Hour)
		e.srv.Fail(githubtest.Failure{Method: "POST", PathSuffix: "/pulls", Times: -1, Status: 429, RateLimited: true, Reset: reset})
		r := e.call("github_call", prArgs)
		if r.OK || r.Error.Code != tools.TransientError || !strings.Contains(r.Error.Message, "rate limit") || r.Error.Details["attempts"] != 1 {
			t.Fatalf("got %+v", r)
		}
		at, err := time.Parse(time.RFC3339, fmt.Sprint(r.Error.Details["retry_at"]))
		if err != nil || at.Sub(reset).Abs() > 2*time.Second {
			t.Fatalf("retry_at %v (%v), want about %s", r.Error.Details["retry_at"], err, reset)
		}
		if g := e.made(r); g.State != forge.GitHubPending || g.Attempts != 1 || count(e.srv.Requests(), "POST", "/pulls") != 1 || len(e.tries(g.ID)) != 0 {
			t.Fatalf("record %+v, %d tries", g, count(e.srv.Requests(), "POST", "/pulls"))
		}
	})
}

// TestMakeFindsAPullRequestMadeBefore: a pull request GitHub already
// holds (made by a try whose outcome was never recorded) is recorded, not
// made again.
func TestMakeFindsAPullRequestMadeBefore(t *testing.T) {
	e := newTestEnv(t)
	e.srv.AddPullRequest("o/r", "earlier", "feature", "main")
	g := e.made(e.ok("github_call", prArgs))
	if g.PR == nil || g.PR.Number != 1 || len(e.srv.PullRequests("o/r")) != 1 || count(e.srv.Requests(), "POST", "/pulls") != 0 {
		t.Fatalf("record %+v, requests %+v", g, e.srv.Requests())
	}
}

// TestReplayAsksGitHubFirst: with clients that remember GitHub's answers
// (github.Cache, as `git codex` opens them), a try after the first sends
// the ETags it has and GitHub answers 304 for what did not change; a
// replay still asks whether the pull request is there, and a pull request
// opened meanwhile changes the listing's ETag, so it is found and
// recorded, never opened a second time.
func TestReplayAsksGitHubFirst(t *testing.T) {
	e := newTestEnv(t)
	e.reg = e.registry(github.NewCache().Open)
	e.ok("config_set", `{"key":"retry.max_attempts","value":"2"}`)
	e.srv.Fail(githubtest.Failure{Method: "POST", PathSuffix: "/pulls", Times: -1, Status: 502})
	g := e.made(e.call("github_call", prArgs))
	if g.State != forge.GitHubPending || g.Attempts != 2 {
		t.Fatalf("record %+v", g)
	}
	var gets []string
	for _, r := range e.srv.Requests() {
		if r.Method == "GET" {
			gets = append(gets, fmt.Sprintf("%s %d %t", r.Path, r.Status, r.IfNoneMatch != ""))
		}
	}
	// each try reads the default branch and looks for the pull request;
	// the second try's reads are conditional, and unchanged
	want := []string{"repos/o/r 200 false", "repos/o/r/pulls 200 false", "repos/o/r 304 true", "repos/o/r/pulls 304 true"}
	if strings.Join(gets, ", ") != strings.Join(want, ", ") || e.srv.NotModified() != 2 {
		t.Fatalf("GETs %q, want %q", gets, want)
	}
	// someone opens it by hand; GitHub answers again
	made := e.srv.AddPullRequest("o/r", "by hand", "feature", "main")
	e.srv.ClearFailures()
	n := len(e.srv.Requests())
	g = e.made(e.ok("github_replay", fmt.Sprintf(`{"id":%q}`, g.ID)))
	if g.State != forge.GitHubDone || g.PR == nil || g.PR.Number != made.Number {
		t.Fatalf("after the replay: %+v", g)
	}
	var replay []string
	for _, r := range e.srv.Requests()[n:] {
		replay = append(replay, fmt.Sprintf("%s %s %d", r.Method, r.Path, r.Status))
	}
	if want := []string{"GET repos/o/r 304", "GET repos/o/r/pulls 200"}; strings.Join(replay, ", ") != strings.Join(want, ", ") {
		t.Fatalf("the replay's requests %q, want %q", replay, want)
	}
	if len(e.srv.PullRequests("o/r")) != 1 {
		t.Fatalf("pull requests %+v", e.srv.PullRequests("o/r"))
	}
}

// TestReplayFindsIssuesByTheirMarker: each issue's body carries a marker
// of its call; a first try opens issues without looking, a replay looks
// for each marker first, so an issue an earlier try opened (its answer
// lost) is recorded, not opened again.
func TestReplayFindsIssuesByTheirMarker(t *testing.T) {
	e := newTestEnv(t)
	e.ok("config_set", `{"key":"retry.max_attempts","value":"1"}`)
	e.srv.Fail(githubtest.Failure{Method: "POST", PathSuffix: "/issues", Times: -1, Status: 502})
	r := e.call("github_call", `{"op":"create_issues","issues":[{"title":"one","body":"first"},{"title":"two","body":"second","labels":["bug"]}]}`)
	g := e.made(r)
	if r.OK || g.State != forge.GitHubPending || count(e.srv.Requests(), "GET", "/issues") != 0 {
		t.Fatalf("got %+v, record %+v", r, g)
	}
	e.srv.ClearFailures()
	// an earlier try opened the first issue; its answer never came
	req, _ := http.NewRequest("POST", e.srv.URL+"repos/o/r/issues", strings.NewReader(fmt.Sprintf(`{"title":"one","body":%q}`, "first\n\n"+forge.IssueMarker(g.ID, 0))))
	req.Header.Set("Authorization", "token "+ghToken)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 201 {
		t.Fatalf("opening the first issue by hand: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	g = e.made(e.ok("github_replay", fmt.Sprintf(`{"id":%q}`, g.ID)))
	issues := e.srv.Issues("o/r")
	if g.State != forge.GitHubDone || len(issues) != 2 || g.Issues[0].Number != 1 || g.Issues[1].Number != 2 || !strings.HasSuffix(g.Issues[1].URL, "/o/r/issues/2") {
		t.Fatalf("record %+v, GitHub holds %+v", g, issues)
	}
	if issues[1].Title != "two" || !strings.Contains(issues[1].Body, forge.IssueMarker(g.ID, 1)) || len(issues[1].Labels) != 1 || issues[1].Labels[0] != "bug" {
		t.Fatalf("the second issue: %+v", issues[1])
	}
}

// TestConcurrentMakesSendOnce: processes replaying the same PENDING calls
// at once (the work mark lets one make each) open each issue once.
func TestConcurrentMakesSendOnce(t *testing.T) {
	e := newTestEnv(t)
	t.Setenv("GH_TOKEN", "")
	var ids []string
	for i := range 3 {
		r := e.call("github_call", fmt.Sprintf(`{"op":"create_issues","issues":[{"title":"i%d","body":"b"},{"title":"j%d","body":"b"}]}`, i, i))
		if r.OK || r.Error.Code != tools.GitHubUnavailable || !strings.Contains(r.Error.Message, "GH_TOKEN") {
			t.Fatalf("got %+v", r)
		}
		ids = append(ids, e.made(r).ID)
	}
	t.Setenv("GH_TOKEN", ghToken)
	var wg sync.WaitGroup
	results := make(chan tools.Result, 12)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, id := range ids {
				results <- e.call("github_replay", fmt.Sprintf(`{"id":%q}`, id))
			}
		}()
	}
	wg.Wait()
	close(results)
	for r := range results {
		if !r.OK && (r.Error.Code != tools.GitHubUnavailable || !strings.Contains(r.Error.Message, "being made by another process")) {
			t.Errorf("a replay: %+v", r.Error)
		}
	}
	for _, id := range ids {
		e.ok("github_replay", fmt.Sprintf(`{"id":%q}`, id)) // whatever a work mark turned away
		if g := e.record(id); g.State != forge.GitHubDone {
			t.Errorf("call %s: %+v", id, g)
		}
	}
	if is := e.srv.Issues("o/r"); len(is) != 6 {
		t.Fatalf("%d issues opened for 6 asked: %+v", len(is), is)
	}
}

// TestMakeRecordsThePullRequestOnItsOwner: the pull request goes on its
// owner's record (the caller's, or For's: a reviewer's approval opens its
// coder's) and, for a call made for a task, to the TaskOutcome with that
// owner; a call for no task hands it nothing.
func TestMakeRecordsThePullRequestOnItsOwner(t *testing.T) {
	e := newTestEnv(t)
	if _, err := tools.Update(t.Context(), e.st, func(tx *gitstate.Tx) error {
		tx.SetMeta(gitstate.Meta{Summary: "agent c1"})
		return tx.Put(tools.AgentPath("c1"), tools.Agent{ID: "c1", Type: tools.TypeCoding, State: tools.StateIdle, CreatedBy: human, Clock: tx.Clock()})
	}); err != nil {
		t.Fatal(err)
	}
	g := e.made(e.ok("github_call", `{"op":"create_pull_request","head":"feature","title":"t","task":"t-0000000000000002","for":"c1"}`))
	var a tools.Agent
	e.st.View(t.Context(), func(s *gitstate.Snapshot) error { return s.Get(tools.AgentPath("c1"), &a) })
	if a.PR == nil || a.PR.Number != g.PR.Number || a.UpdatedBy != human {
		t.Fatalf("c1's record: %+v", a)
	}
	if want := g.ID + " t-0000000000000002 c1"; len(e.outcomes) != 1 || e.outcomes[0] != want {
		t.Fatalf("task outcomes %q, want %q", e.outcomes, want)
	}
	commitOn(t, e.dir, "other", "other.txt", "more\n")
	if g := e.made(e.ok("github_call", `{"op":"create_pull_request","head":"other","title":"t"}`)); g.State != forge.GitHubDone || len(e.outcomes) != 1 {
		t.Fatalf("record %+v, task outcomes %q", g, e.outcomes)
	}
}

// TestReplayOthersTriesEachOnce: the calls PENDING when a call was asked
// for are replayed after it, one try each, until one fails: the rest wait
// for github retry.
func TestReplayOthersTriesEachOnce(t *testing.T) {
	e := newTestEnv(t)
	t.Setenv("GH_TOKEN", "")
	var waiting []string
	for i := range 2 {
		waiting = append(waiting, e.made(e.call("github_call", fmt.Sprintf(`{"op":"create_issues","issues":[{"title":"w%d","body":"b"}]}`, i))).ID)
	}
	t.Setenv("GH_TOKEN", ghToken)
	e.srv.Fail(githubtest.Failure{Method: "POST", PathSuffix: "/issues", Times: -1, Status: 502})
	if g := e.made(e.ok("github_call", `{"op":"create_pull_request","head":"feature","title":"t","others":true}`)); g.State != forge.GitHubDone {
		t.Fatalf("the call: %+v", g)
	}
	// one was tried, once, and failed: the other was not tried
	first, second := e.record(waiting[0]), e.record(waiting[1])
	if first.State != forge.GitHubPending || second.State != forge.GitHubPending || first.Attempts+second.Attempts != 1 {
		t.Fatalf("the waiting calls: %+v, %+v", first, second)
	}
	e.srv.ClearFailures()
	commitOn(t, e.dir, "other", "other.txt", "more\n")
	e.ok("github_call", `{"op":"create_pull_request","head":"other","title":"t","others":true}`)
	for _, id := range waiting {
		if g := e.record(id); g.State != forge.GitHubDone || g.Issues[0].Number == 0 {
			t.Fatalf("waiting call %s: %+v", id, g)
		}
	}
}

// TestMakeWithoutGitHub: no client, no token or no repository: nothing
// is sent, the call stays PENDING with GITHUB_UNAVAILABLE and no try
// counted.
func TestMakeWithoutGitHub(t *testing.T) {
	for _, tt := range []struct {
		name, env, message string
	}{
		{"no client", "", "no GitHub client"},
		{"no token", "GH_TOKEN", "GH_TOKEN"},
		{"no repository", "GH_REPO", "GH_REPO"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			if tt.env == "" {
				e.reg = e.registry(nil)
			} else {
				t.Setenv(tt.env, "")
			}
			e.ok("config_set", `{"key":"retry.max_attempts","value":"3"}`)
			r := e.call("github_call", prArgs)
			if r.OK || r.Error.Code != tools.GitHubUnavailable || !strings.Contains(r.Error.Message, tt.message) {
				t.Fatalf("got %+v", r)
			}
			if g := e.made(r); g.State != forge.GitHubPending || g.Attempts != 0 || g.LastCode != tools.GitHubUnavailable || len(e.srv.Requests()) != 0 {
				t.Fatalf("record %+v, %d requests", g, len(e.srv.Requests()))
			}
		})
	}
}

// TestGitHubTokenNeverGoesToASharedEndpoint: github.api_url is a setting
// of this machine (git config codex.github.apiUrl, or CODEX_GITHUB_API_URL
// over it): a value in the shared state (a peer's) never receives the token;
// config_set takes https, or plain http to this machine only; one set by
// hand in git config is refused where the token would leave, before
// anything is sent.
func TestGitHubTokenNeverGoesToASharedEndpoint(t *testing.T) {
	e := newTestEnv(t)
	if k, ok := e.reg.ConfigKeys().Lookup("github.api_url"); !ok || !k.Local || k.Kind != "string" || k.Default != "" {
		t.Fatalf("github.api_url: %+v", k)
	}
	if got := gitstatetest.Git(t, e.dir, "config", "--local", "codex.github.apiUrl"); got != e.srv.URL {
		t.Fatalf("git config codex.github.apiUrl = %q", got)
	}
	evil := githubtest.New()
	t.Cleanup(evil.Close)
	if _, err := tools.Update(t.Context(), e.st, func(tx *gitstate.Tx) error {
		var c tools.Config
		if err := tx.Get(tools.PathConfig, &c); err != nil {
			return err
		}
		c.Entries["github.api_url"] = tools.ConfigEntry{Value: []byte(fmt.Sprintf("%q", evil.URL)), SetBy: "human:mallory@example.com", Clock: tx.Clock()}
		tx.SetMeta(gitstate.Meta{Summary: "config_set: a peer's endpoint"})
		return tx.Put(tools.PathConfig, c)
	}); err != nil {
		t.Fatal(err)
	}
	if g := e.made(e.ok("github_call", prArgs)); g.State != forge.GitHubDone || len(evil.Requests()) != 0 || len(e.srv.Requests()) == 0 {
		t.Fatalf("record %+v; the shared endpoint got %d request(s)", g, len(evil.Requests()))
	}

	// https only, or plain http to this machine
	if r := e.call("config_set", `{"key":"github.api_url","value":"http://ghe.example.com/api/v3/"}`); r.OK || r.Error.Code != tools.InvalidInput || !strings.Contains(r.Error.Message, "plain http to another machine") {
		t.Fatalf("plain http elsewhere: %+v", r)
	}
	for _, ok := range []string{"https://ghe.example.com/api/v3/", "http://127.0.0.1:8080/", "http://[::1]:9/", "http://localhost:1/"} {
		e.ok("config_set", fmt.Sprintf(`{"key":"github.api_url","value":%q}`, ok))
		if got := gitstatetest.Git(t, e.dir, "config", "--local", "codex.github.apiUrl"); got != ok {
			t.Fatalf("git config codex.github.apiUrl = %q, want %q", got, ok)
		}
	}
	// set by hand in git config: refused where the token would leave
	gitstatetest.Git(t, e.dir, "config", "codex.github.apiUrl", "http://attacker.example.com/")
	commitOn(t, e.dir, "other", "other.txt", "more\n")
	before := len(e.srv.Requests())
	r := e.call("github_call", `{"op":"create_pull_request","head":"other","title":"again"}`)
	if r.OK || r.Error.Code != tools.GitHubUnavailable || !strings.Contains(r.Error.Message, "plain http to another machine") {
		t.Fatalf("got %+v", r)
	}
	if len(e.srv.Requests()) != before || len(evil.Requests()) != 0 {
		t.Fatal("a request was sent")
	}
	// CODEX_GITHUB_API_URL wins over git config
	t.Setenv("CODEX_GITHUB_API_URL", e.srv.URL)
	if g := e.made(e.ok("github_replay", fmt.Sprintf(`{"id":%q}`, e.made(r).ID))); g.State != forge.GitHubDone || len(e.srv.Requests()) == before {
		t.Fatalf("with CODEX_GITHUB_API_URL: %+v", g)
	}
}

// TestGitHubErrorRepeatingTheToken is issue 29 item 4: when GitHub (or a
// proxy) repeated the request's credential in its error message, the
// Codex-Message trailer was redacted but the call record's last_error
// (committed, pushed) kept GH_TOKEN verbatim, on the 422 and the 5xx
// paths. A token of a shape the scanner knows (ghp_) and one it does not
// (an old 40-hex OAuth token) are both taken out: the client knows the
// token it sent.
func TestGitHubErrorRepeatingTheToken(t *testing.T) {
	for _, tok := range []struct{ name, value string }{
		{"ghp", ghToken},
		{"hex", "0123456789abcdef0123456789abcdef01234567"},
	} {
		for _, status := range []int{422, 502} {
			t.Run(fmt.Sprintf("%s/%d", tok.name, status), func(t *testing.T) {
				e := newTestEnv(t)
				t.Setenv("GH_TOKEN", tok.value)
				e.srv.RequireToken(tok.value)
				e.srv.Fail(githubtest.Failure{Method: "POST", PathSuffix: "/pulls", Times: -1, Status: status, Message: "Bad credentials: token " + tok.value + " is not welcome"})
				r := e.call("github_call", prArgs)
				if r.OK {
					t.Fatalf("got %+v", r)
				}
				if strings.Contains(r.Error.Message, tok.value) {
					t.Errorf("the answer repeats the token: %s", r.Error.Message)
				}
				g := e.made(r)
				if g.LastError == "" || strings.Contains(g.LastError, tok.value) || !strings.Contains(g.LastError, "[redacted: GitHub token]") {
					t.Errorf("last_error %q", g.LastError)
				}
				if all := reachableObjects(t, e.dir); strings.Contains(all, tok.value) {
					t.Errorf("the token is in an object reachable from refs/codex or refs/notes")
				}
			})
		}
	}
}

// reachableObjects is every object reachable from refs/codex/* and
// refs/notes/*, as git cat-file --batch prints them.
func reachableObjects(t *testing.T, dir string) string {
	t.Helper()
	objs := gitstatetest.Git(t, dir, "rev-list", "--objects", "--glob=refs/codex/*", "--glob=refs/notes/*")
	var ids []string
	for _, l := range strings.Split(objs, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			ids = append(ids, f[0])
		}
	}
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	all, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) < 10 {
		t.Fatalf("only %d objects scanned", len(ids))
	}
	return string(all)
}

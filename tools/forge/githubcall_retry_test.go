package forge_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/github/githubtest"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/forge"
)

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

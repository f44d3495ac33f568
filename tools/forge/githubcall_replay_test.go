package forge_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/gitcodex/git-codex/github"
	"github.com/gitcodex/git-codex/github/githubtest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/forge"
)

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

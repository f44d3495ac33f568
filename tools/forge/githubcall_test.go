package forge_test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/github/githubtest"
	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/forge"
)

const prArgs = `{"op":"create_pull_request","head":"feature","title":"Add the thing","task":"t-0000000000000001"}`

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

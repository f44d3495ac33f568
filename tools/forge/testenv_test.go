package forge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gitcodex/git-codex/github"
	"github.com/gitcodex/git-codex/github/githubtest"
	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/forge"
)

// The forge's tests run its runner as the tools above it do, from a
// call's after-step, but through tools of their own (callTool,
// replayTool): the tools that ask for GitHub calls are work's, above this
// package. They talk to the GitHub stand-in (github/githubtest) through
// the real REST client, and push to a real bare repository.

// ghToken is shaped like a real token, so that the secret checks would
// catch it anywhere it leaked.
const ghToken = "ghp_TESTtokenTESTtokenTESTtokenTESTtoken12"

// human is the caller of the tests' calls: a person needs no record.
const human = "human:t@example.com"

// testEnv is a repository with a commit on main and a branch feature one
// commit ahead, both pushed to a bare origin (origin/HEAD: main), a state
// that knows GitHub call records, and a stand-in GitHub serving o/r that
// the repository's github.api_url points at, with retries 1 ms apart.
type testEnv struct {
	t      *testing.T
	dir    string // the repository
	origin string // its bare origin
	st     *gitstate.Store
	reg    *tools.Registry
	srv    *githubtest.Server

	mu       sync.Mutex
	outcomes []string // the TaskOutcome calls: "<call id> <task> <owner>"
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	srv := githubtest.New()
	t.Cleanup(srv.Close)
	srv.RequireToken(ghToken)
	t.Setenv("GH_REPO", "o/r")
	t.Setenv("GH_TOKEN", ghToken)
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("GH_ENTERPRISE_TOKEN", "")
	t.Setenv("GH_CONFIG_DIR", t.TempDir())
	t.Setenv("GH_PATH", "/nonexistent/gh")
	t.Setenv("CODEX_GITHUB_API_URL", "")

	dir := gitstatetest.NewRepo(t)
	origin := filepath.Join(t.TempDir(), "origin.git")
	gitstatetest.Git(t, dir, "init", "-q", "--bare", "-b", "main", origin)
	gitstatetest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
	gitstatetest.Git(t, dir, "remote", "add", "origin", origin)
	gitstatetest.Git(t, dir, "push", "-q", "origin", "main")
	gitstatetest.Git(t, dir, "remote", "set-head", "origin", "main")
	commitOn(t, dir, "feature", "work.txt", "the work\n")

	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := &testEnv{t: t, dir: dir, origin: origin, st: st, srv: srv}
	e.reg = e.registry(github.Open)
	if _, err := e.reg.Init(t.Context(), st, tools.Origin{ID: human}); err != nil {
		t.Fatal(err)
	}
	e.ok("config_set", fmt.Sprintf(`{"key":"github.api_url","value":%q}`, srv.URL))
	e.ok("config_set", `{"key":"retry.delay_ms","value":"1"}`)
	return e
}

// registry is the framework's config tools and the tests' two, with the
// GitHub call records' kind and the forge's keys, opening GitHub with
// open (nil: no client).
func (e *testEnv) registry(open tools.GitHubOpener) *tools.Registry {
	reg := tools.NewRegistry(tools.Catalog{
		Tools:      append(tools.ConfigTools(), e.callTool(), e.replayTool()),
		Kinds:      []tools.Kind{forge.CallKind()},
		ConfigKeys: forge.Keys(),
	})
	if open == nil {
		return reg
	}
	return reg.WithEnv(tools.Env{GitHub: open})
}

// callIn asks for one GitHub call, as create_pull_request and
// create_issues do.
type callIn struct {
	Op     string               `json:"op"`
	Head   string               `json:"head,omitempty"`
	Base   string               `json:"base,omitempty"`
	Title  string               `json:"title,omitempty"`
	Task   string               `json:"task,omitempty"`
	For    string               `json:"for,omitempty"`
	Issues []forge.IssueRequest `json:"issues,omitempty"`
	// Others: the calls PENDING before this one are replayed after it
	// (Run.ReplayOthers).
	Others bool `json:"others,omitempty"`
}

// callTool records a GitHub call's intent and makes it in its
// after-step; its answer is the call as recorded.
func (e *testEnv) callTool() *tools.Tool {
	return tools.Define("github_call", "github.create_pull_request", "test tool", tools.CLI{},
		func(ctx context.Context, c *tools.Call, in callIn) (*forge.GitHubCall, error) {
			tx := c.Tx
			now := tx.Now()
			g := forge.GitHubCall{ID: tx.NewID("g"), Op: in.Op, Caller: c.Caller.ID, For: in.For, Task: in.Task, Title: in.Title, Body: "the body",
				Head: in.Head, Base: in.Base, Issues: in.Issues, State: forge.GitHubPending,
				CreatedAt: now, UpdatedAt: now, UpdatedBy: c.Caller.ID, Clock: tx.Clock()}
			if err := tx.Put(forge.CallPath(g.ID), g); err != nil {
				return nil, err
			}
			var others []string
			if in.Others {
				err := tools.WalkJSON(tx, forge.Dir, func(x forge.GitHubCall) {
					if x.State == forge.GitHubPending && x.ID != g.ID {
						others = append(others, x.ID)
					}
				})
				if err != nil {
					return nil, err
				}
			}
			c.Target(g.ID)
			c.Summarize("%s asks GitHub for %s", c.Caller.ID, in.Op)
			out := &g
			c.After(func(ctx context.Context, f *tools.Followup) error {
				r, err := forge.NewRun(ctx, f, e.taskOutcome)
				if err != nil {
					return err
				}
				*out, err = r.Make(ctx, g.ID)
				if err != nil {
					return err
				}
				r.ReplayOthers(ctx, others)
				return nil
			})
			return out, nil
		})
}

type replayIn struct {
	ID string `json:"id"`
}

// replayTool replays one call, as github_retry does.
func (e *testEnv) replayTool() *tools.Tool {
	return tools.Define("github_replay", "github.retry", "test tool", tools.CLI{},
		func(ctx context.Context, c *tools.Call, in replayIn) (*forge.GitHubCall, error) {
			c.Target(in.ID)
			c.Summarize("%s replays %s", c.Caller.ID, in.ID)
			out := &forge.GitHubCall{}
			c.After(func(ctx context.Context, f *tools.Followup) error {
				r, err := forge.NewRun(ctx, f, e.taskOutcome)
				if err != nil {
					return err
				}
				*out, err = r.Make(ctx, in.ID)
				return err
			})
			return out, nil
		})
}

// taskOutcome is the TaskOutcome the tests hand NewRun: it notes the call.
func (e *testEnv) taskOutcome(c *tools.Call, g forge.GitHubCall, owner string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.outcomes = append(e.outcomes, g.ID+" "+g.Task+" "+owner)
	return nil
}

func (e *testEnv) call(tool, args string) tools.Result {
	e.t.Helper()
	return e.reg.CallAs(e.t.Context(), e.st, tools.Origin{ID: human}, tool, json.RawMessage(args))
}

func (e *testEnv) ok(tool, args string) tools.Result {
	e.t.Helper()
	r := e.call(tool, args)
	if !r.OK {
		e.t.Fatalf("%s %s: %+v", tool, args, r.Error)
	}
	return r
}

// made is a call's answer (the call as recorded), or the record its
// error names.
func (e *testEnv) made(r tools.Result) forge.GitHubCall {
	e.t.Helper()
	if r.OK {
		return *r.Data.(*forge.GitHubCall)
	}
	id, _ := r.Error.Details["call_id"].(string)
	if id == "" {
		e.t.Fatalf("no call_id in %+v", r.Error)
	}
	return e.record(id)
}

// record reads call id's record at the state's tip.
func (e *testEnv) record(id string) forge.GitHubCall {
	e.t.Helper()
	var g forge.GitHubCall
	if err := e.st.View(e.t.Context(), func(s *gitstate.Snapshot) error { return s.Get(forge.CallPath(id), &g) }); err != nil {
		e.t.Fatal(err)
	}
	return g
}

// trail is the audit trail, newest first, in git log's format: the
// state's commits and this machine's reads and refusals.
func (e *testEnv) trail(format string) []string {
	e.t.Helper()
	out := gitstatetest.Git(e.t, e.dir, "log", "--format="+format, gitstate.RefState, "--glob="+gitstate.ReadsPrefix+"*/*")
	return strings.Split(out, "\n")
}

// tries are the audit records of a call's failed tries: their
// Codex-Error and Codex-Message, oldest first.
func (e *testEnv) tries(id string) []string {
	e.t.Helper()
	var out []string
	for _, l := range e.trail("%(trailers:key=Codex-Target,valueonly,separator=)|%(trailers:key=Codex-Error,valueonly,separator=)|%(trailers:key=Codex-Message,valueonly,separator=)") {
		if rest, ok := strings.CutPrefix(l, id+"|"); ok && strings.Contains(rest, "|try ") {
			out = append([]string{rest}, out...)
		}
	}
	return out
}

// count is how many requests the stand-in received of method with a path
// ending in suffix.
func count(reqs []githubtest.Request, method, suffix string) int {
	n := 0
	for _, r := range reqs {
		if r.Method == method && strings.HasSuffix(r.Path, suffix) {
			n++
		}
	}
	return n
}

// commitOn commits file on branch (made from main if missing) without
// touching the working tree, and returns the commit.
func commitOn(t *testing.T, dir, branch, file, content string) string {
	t.Helper()
	parent := "main"
	if _, err := gitstatetest.GitErr(dir, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
		parent = branch
	}
	index := filepath.Join(t.TempDir(), "index")
	env := []string{"GIT_INDEX_FILE=" + index}
	gitEnv(t, dir, env, "read-tree", parent)
	blob := gitEnv(t, dir, nil, "hash-object", "-w", "--stdin", content)
	gitEnv(t, dir, env, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+file)
	tree := gitEnv(t, dir, env, "write-tree")
	commit := gitstatetest.Git(t, dir, "commit-tree", tree, "-p", parent, "-m", "add "+file)
	gitstatetest.Git(t, dir, "update-ref", "refs/heads/"+branch, commit)
	return commit
}

// gitEnv runs git in dir with more environment, stdin as the last
// argument of hash-object --stdin.
func gitEnv(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	var stdin string
	if args[0] == "hash-object" {
		stdin, args = args[len(args)-1], args[:len(args)-1]
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/gitcodex/git-codex/tools/work"
)

// memForge is a GitHub kept in memory: pull requests by number, merges
// counted, and a failure to answer calls with, injected at the
// tools.GitHub interface (epic_rest_test.go drives the same tools through
// go-gh against github/githubtest).
type memForge struct {
	mu     sync.Mutex
	prs    map[int]*tools.PullRequest
	merges map[int]int    // merge calls per pull request
	method map[int]string // merge method used
	fail   error          // returned by every call while set
}

func newMemForge() *memForge {
	return &memForge{prs: map[int]*tools.PullRequest{}, merges: map[int]int{}, method: map[int]string{}}
}

func (m *memForge) opener() tools.GitHubOpener {
	return func(ctx context.Context, s tools.GitHubSettings) (tools.GitHub, error) { return m, nil }
}

func (m *memForge) setFail(err error) { m.mu.Lock(); m.fail = err; m.mu.Unlock() }

func (m *memForge) Repo() string { return "acme/widgets" }

func (m *memForge) DefaultBranch(ctx context.Context) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return "main", m.fail
}

func (m *memForge) CreatePullRequest(ctx context.Context, in tools.NewPullRequest) (tools.PullRequest, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return tools.PullRequest{}, m.fail
	}
	for _, pr := range m.prs {
		if pr.Head == in.Head && pr.Base == in.Base && pr.State == "open" {
			return tools.PullRequest{}, &tools.GitHubError{Status: 422, Message: "A pull request already exists for " + in.Head}
		}
	}
	n := len(m.prs) + 1
	pr := &tools.PullRequest{Number: n, URL: fmt.Sprintf("https://github.com/acme/widgets/pull/%d", n), Head: in.Head, Base: in.Base, State: "open"}
	m.prs[n] = pr
	return *pr, nil
}

func (m *memForge) FindPullRequest(ctx context.Context, head, base string) (tools.PullRequest, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return tools.PullRequest{}, false, m.fail
	}
	for _, pr := range m.prs {
		if pr.Head == head && pr.Base == base && pr.State == "open" {
			return *pr, true, nil
		}
	}
	return tools.PullRequest{}, false, nil
}

func (m *memForge) GetPullRequest(ctx context.Context, n int) (tools.PullRequest, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return tools.PullRequest{}, m.fail
	}
	pr, ok := m.prs[n]
	if !ok {
		return tools.PullRequest{}, &tools.GitHubError{Status: 404, Message: "Not Found"}
	}
	return *pr, nil
}

func (m *memForge) MergePullRequest(ctx context.Context, n int, method string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return "", m.fail
	}
	pr, ok := m.prs[n]
	if !ok {
		return "", &tools.GitHubError{Status: 404, Message: "Not Found"}
	}
	if pr.Merged {
		return "", &tools.GitHubError{Status: 405, Message: "Pull Request is not mergeable"}
	}
	m.merges[n]++
	m.method[n] = method
	pr.Merged, pr.State = true, "closed"
	return fmt.Sprintf("%040x", n), nil
}

func (m *memForge) CreateIssue(ctx context.Context, in tools.NewIssue) (tools.Issue, error) {
	return tools.Issue{}, &tools.GitHubError{Status: 501, Message: "not in memForge"}
}

func (m *memForge) FindIssue(ctx context.Context, marker string) (tools.Issue, bool, error) {
	return tools.Issue{}, false, nil
}

// submitIn is the input of the test's stand-in for create_pull_request.
type submitIn struct {
	TaskID string `json:"task_id"`
	Head   string `json:"head"`
}

// submitTool records a pull request on a task as create_pull_request does
// (the task to REVIEW, its submission time), without the caller's git
// branch: it opens one into the task's epic branch from any head.
func submitTool(forge tools.GitHub) *tools.Tool {
	return tools.Define("test_submit_pr", "github.create_pull_request", "test stand-in for create_pull_request", tools.CLI{Path: "test submit"},
		func(ctx context.Context, c *tools.Call, in submitIn) (work.Task, error) {
			var t work.Task
			if err := c.Tx.Get(taskFile(in.TaskID), &t); err != nil {
				return t, err
			}
			var e work.Epic
			if err := c.Tx.Get("epics/"+gitstate.Fanout(t.EpicID)+"/"+t.EpicID+".json", &e); err != nil {
				return t, err
			}
			pr, err := forge.CreatePullRequest(ctx, tools.NewPullRequest{Title: t.Title, Body: "work", Head: in.Head, Base: e.Branch})
			if err != nil {
				return t, err
			}
			now := c.Tx.Now()
			t.PR, t.SubmittedAt, t.State, t.Clock = &pr, &now, work.TaskReview, c.Tx.Clock()
			return t, c.Tx.Put(taskFile(t.ID), t)
		})
}

// putIn is the input of test_put.
type putIn struct {
	Path   string          `json:"path"`
	Record json.RawMessage `json:"record"`
}

// putTool writes a record as it is: for the fields no tool here sets (an
// instance's worktree).
var putTool = tools.Define("test_put", "test.put", "write a record", tools.CLI{Path: "test put"},
	func(ctx context.Context, c *tools.Call, in putIn) (struct{}, error) {
		return struct{}{}, c.Tx.PutRaw(in.Path, in.Record)
	})

// epicEnv is a repository with a supervisor, three workers and a forge.
func epicEnv(t *testing.T) (*env, *memForge) {
	e := newEnv(t)
	gitstatetest.Git(t, e.dir, "commit", "-q", "--allow-empty", "-m", "base")
	forge := newMemForge()
	cat := builtin.Catalog()
	cat.Tools = append(cat.Tools, submitTool(forge), putTool)
	reg := tools.NewRegistry(cat)
	e.reg = reg.WithEnv(tools.Env{GitHub: forge.opener()})
	e.ok(human, "config_set", `{"key":"retry.delay_ms","value":"1"}`)
	e.ok(human, "agent_register", `{"id":"boss","type":"supervisor"}`)
	for _, w := range []string{"w1", "w2", "w3"} {
		e.ok(human, "agent_register", `{"id":"`+w+`","type":"worker"}`)
	}
	return e, forge
}

func (e *env) newEpic(caller string) string {
	e.t.Helper()
	return e.ok(caller, "epic_create", `{"title":"User profiles","description":"profiles end to end"}`)["epic_id"].(string)
}

func (e *env) epicTask(caller, epic, title string) string {
	e.t.Helper()
	args, _ := json.Marshal(map[string]string{"title": title, "description": "do " + title, "epic_id": epic})
	return e.ok(caller, "task_create", string(args))["id"].(string)
}

// subjectsOf is the subjects of the mail in agent's inbox, oldest first.
func (e *env) subjectsOf(agent string) []string {
	e.t.Helper()
	var subjects []string
	for _, m := range e.ok(agent, "mail_list_inbox", `{"include_read":true}`)["mails"].([]any) {
		subjects = append(subjects, m.(map[string]any)["subject"].(string))
	}
	return subjects
}

func TestEpicReviewLoop(t *testing.T) {
	e, forge := epicEnv(t)
	epic := e.newEpic("boss")
	if b := gitstatetest.Git(t, e.dir, "rev-parse", "refs/heads/epic/"+epic); b != gitstatetest.Git(t, e.dir, "rev-parse", "HEAD") {
		t.Fatalf("epic branch at %s, want HEAD", b)
	}
	t1, t2, t3 := e.epicTask("boss", epic, "Profile page"), e.epicTask("boss", epic, "Avatar upload"), e.epicTask("boss", epic, "Settings")
	other := e.newTask("boss", "Not in the epic")

	// the supervisor's own epic, when epic_id is omitted
	l := e.ok("boss", "epic_list_tasks", `{}`)
	if l["epic_id"] != epic || l["count"].(float64) != 3 {
		t.Fatalf("epic_list_tasks = %v", l)
	}
	if l := e.ok("boss", "epic_list_tasks", `{"epic_id":"`+epic+`","state":"REVIEW"}`); l["count"].(float64) != 0 {
		t.Errorf("REVIEW tasks before any submission: %v", l)
	}
	if s := e.ok("boss", "agent_get_epic", `{}`); s["id"] != epic || s["state"] != work.EpicInProgress {
		t.Errorf("boss's epic = %v", s)
	}
	if s := e.ok("boss", "agent_get_status", `{}`); s["current_epic_id"] != epic || s["state"] != "idle" {
		t.Errorf("boss's status = %v", s)
	}

	for i, w := range []string{"w1", "w2", "w3"} {
		e.ok(w, "task_claim", `{"id":"`+[]string{t1, t2, t3}[i]+`"}`)
	}
	s := e.ok("w1", "agent_get_status", `{}`)
	if s["state"] != work.StateBusy || s["current_task_id"] != t1 || s["current_epic_id"] != epic {
		t.Fatalf("w1's status while holding %s: %v", t1, s)
	}
	if g := e.ok("w1", "agent_get_task", `{}`); g["id"] != t1 || g["epic_id"] != epic {
		t.Errorf("w1's task = %v", g)
	}
	if g := e.ok("w1", "agent_get_epic", `{}`); g["id"] != epic {
		t.Errorf("w1's epic = %v", g)
	}

	// submissions in the order w2, w1, w3: the queue follows it
	for _, s := range [][2]string{{"w2", t2}, {"w1", t1}, {"w3", t3}} {
		e.ok(s[0], "test_submit_pr", `{"task_id":"`+s[1]+`","head":"codex/`+s[0]+`"}`)
		time.Sleep(2 * time.Millisecond)
	}
	q := e.ok("boss", "epic_get_review_queue", `{}`)
	queue := q["queue"].([]any)
	if q["count"].(float64) != 3 || len(queue) != 3 {
		t.Fatalf("queue = %v", q)
	}
	for i, want := range []string{t2, t1, t3} {
		entry := queue[i].(map[string]any)
		if entry["task_id"] != want || entry["position"].(float64) != float64(i+1) || entry["pr_url"] == "" {
			t.Errorf("queue[%d] = %v, want task %s at position %d", i, entry, want, i+1)
		}
	}

	// approve t1: squash-merged once, COMPLETED, the others told to rebase
	tip := e.tip()
	a := e.ok("boss", "epic_approve_pr", `{"task_id":"`+t1+`"}`)
	if a["merged"] != true || a["state"] != work.TaskCompleted || fmt.Sprint(a["rebase_requests"]) != "[w2 w3]" {
		t.Fatalf("approve = %v", a)
	}
	msgs := e.since(tip, "%s%n%(trailers:key=Codex-Follows,valueonly)")
	if !strings.Contains(msgs, "merged pull request #") || !strings.Contains(msgs, "approves task "+t1) {
		t.Errorf("audit trail of the approval:\n%s", msgs)
	}
	n1 := e.taskAt(t1).PR.Number
	if forge.merges[n1] != 1 || forge.method[n1] != "squash" {
		t.Errorf("forge merges of #%d: %d by %q", n1, forge.merges[n1], forge.method[n1])
	}
	if tk := e.taskAt(t1); tk.State != work.TaskCompleted || !tk.PR.Merged {
		t.Errorf("t1 after approval: %+v", tk)
	}
	for _, w := range []string{"w2", "w3"} {
		if in := e.subjectsOf(w); len(in) != 1 || !strings.HasPrefix(in[0], "Rebase Required") {
			t.Errorf("%s's inbox = %q", w, in)
		}
	}
	if in := e.subjectsOf("w1"); len(in) != 0 {
		t.Errorf("w1 (whose PR merged) was mailed %q", in)
	}
	// approving again: not in REVIEW any more, nothing merged twice
	e.refused("boss", "epic_approve_pr", `{"task_id":"`+t1+`"}`, tools.InvalidInput)

	// request changes on t2: IN_PROGRESS, mailed and kept as a comment
	r := e.ok("boss", "epic_request_changes", `{"task_id":"`+t2+`","feedback":"Handle a missing avatar."}`)
	if r["state"] != work.TaskInProgress || r["holder"] != "w2" {
		t.Fatalf("request_changes = %v", r)
	}
	if in := strings.Join(e.subjectsOf("w2"), "|"); !strings.Contains(in, "Changes requested: Avatar upload") || strings.Count(in, "|") != 1 {
		t.Errorf("w2's inbox = %q", in)
	}
	g := e.ok("w2", "agent_get_task", `{}`)
	cs := g["comments"].([]any)
	if len(cs) != 1 || cs[0].(map[string]any)["kind"] != work.CommentChangesRequested || cs[0].(map[string]any)["body"] != "Handle a missing avatar." {
		t.Errorf("w2's task comments = %v", cs)
	}
	if q := e.ok("boss", "epic_get_review_queue", `{"epic_id":"`+epic+`"}`); q["count"].(float64) != 1 {
		t.Errorf("queue after approve and request changes = %v", q)
	}

	// the epic's pull request waits for every task
	err := e.refused("boss", "epic_create_epic_pr", `{}`, tools.InvalidInput)
	if fmt.Sprint(err.Details["open_tasks"]) != "["+t2+" (IN_PROGRESS) "+t3+" (REVIEW)]" {
		t.Errorf("open tasks = %v", err.Details["open_tasks"])
	}
	e.ok("w2", "task_update_status", `{"id":"`+t2+`","state":"REVIEW"}`)
	e.ok("boss", "epic_approve_pr", `{"task_id":"`+t3+`"}`)
	e.ok("boss", "epic_approve_pr", `{"task_id":"`+t2+`"}`)
	if in := e.subjectsOf("w2"); strings.Count(strings.Join(in, "|"), "Rebase Required") != 2 {
		t.Errorf("w2 (pending after t3 merged) inbox = %q", in)
	}
	p := e.ok("boss", "epic_create_epic_pr", `{}`)
	if p["state"] != work.EpicCompleted || p["base"] != "main" || p["branch"] != "epic/"+epic || p["pr_url"] == "" {
		t.Fatalf("epic pr = %v", p)
	}
	if in := e.subjectsOf(human); len(in) != 1 || !strings.HasPrefix(in[0], "Epic ready for review") {
		t.Errorf("humans' inbox = %q", in)
	}
	// again: the same pull request, none opened twice
	again := e.ok("boss", "epic_create_epic_pr", `{"epic_id":"`+epic+`"}`)
	if again["pr_number"] != p["pr_number"] || len(forge.prs) != 4 {
		t.Errorf("second epic pr = %v; forge holds %d pull requests", again, len(forge.prs))
	}
	// the task outside the epic was never in its queue or lists
	if tk := e.taskAt(other); tk.EpicID != "" || tk.State != work.TaskPending {
		t.Errorf("task outside the epic: %+v", tk)
	}
}

// TestApproveGitHubFailures: GitHub unreachable, unconfigured, failing or
// refusing leaves the task in REVIEW with nothing recorded but the
// failure; a retry after GitHub merged (the outcome never recorded) does
// not merge twice.
func TestApproveGitHubFailures(t *testing.T) {
	e, forge := epicEnv(t)
	epic := e.newEpic("boss")
	id := e.epicTask("boss", epic, "Profile page")
	e.ok("w1", "task_claim", `{"id":"`+id+`"}`)
	e.ok("w1", "test_submit_pr", `{"task_id":"`+id+`","head":"codex/w1"}`)
	n := e.taskAt(id).PR.Number

	cases := []struct {
		name string
		err  error
		want tools.Code
	}{
		{"no answer", &tools.GitHubError{Message: "dial tcp: connection refused"}, tools.GitHubUnavailable},
		{"server error", &tools.GitHubError{Status: 502, Message: "Bad Gateway"}, tools.TransientError},
		{"rate limit", &tools.GitHubError{Status: 403, Message: "API rate limit exceeded", RetryAt: time.Now().Add(time.Hour)}, tools.TransientError},
		{"refused", &tools.GitHubError{Status: 401, Message: "Bad credentials"}, tools.GitHubRefused},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forge.setFail(tc.err)
			trees, tip := e.workTrees(), e.tip()
			r := e.call("boss", "epic_approve_pr", `{"task_id":"`+id+`"}`)
			if r.OK || r.Error.Code != tc.want {
				t.Fatalf("got %+v, want %s", r, tc.want)
			}
			if e.workTrees() != trees {
				t.Errorf("a failed approval changed the tasks, epics or comments")
			}
			if tk := e.taskAt(id); tk.State != work.TaskReview || tk.PR.Merged {
				t.Errorf("task after the failure: %+v", tk)
			}
			e.failureRecorded(tip, tc.want)
		})
	}
	forge.setFail(nil)

	// no GitHub at all in this process
	bare := &env{t: t, dir: e.dir, st: e.st, reg: e.reg.WithEnv(tools.Env{})}
	if r := bare.call("boss", "epic_approve_pr", `{"task_id":"`+id+`"}`); r.OK || r.Error.Code != tools.GitHubUnavailable {
		t.Fatalf("without GitHub: %+v", r)
	}
	if forge.merges[n] != 0 {
		t.Fatalf("merged %d times while failing", forge.merges[n])
	}

	// GitHub merged, but the outcome was never recorded (a crash): approving
	// again records it without a second merge
	forge.prs[n].Merged, forge.prs[n].State = true, "closed"
	e.ok("boss", "epic_approve_pr", `{"task_id":"`+id+`"}`)
	if forge.merges[n] != 0 {
		t.Errorf("merged again a pull request GitHub had merged")
	}
	if tk := e.taskAt(id); tk.State != work.TaskCompleted {
		t.Errorf("task after the recorded merge: %+v", tk)
	}
}

func TestEpicRefusals(t *testing.T) {
	e, _ := epicEnv(t)
	e.ok(human, "agent_register", `{"id":"plan","type":"planning"}`)
	epic := e.newEpic("boss")
	id := e.epicTask("boss", epic, "Profile page")

	e.refused("w1", "epic_create", `{"title":"x","description":"y"}`, tools.PermissionDenied)
	e.refused("w1", "epic_get_review_queue", `{}`, tools.PermissionDenied)
	e.refused("boss", "agent_get_task", `{}`, tools.InvalidAgentState)
	e.refused("w1", "agent_get_task", `{}`, tools.InvalidAgentState)
	e.refused("w1", "agent_get_epic", `{}`, tools.InvalidAgentState)
	e.refused("plan", "agent_get_epic", `{}`, tools.InvalidAgentState)
	e.refused("plan", "epic_list_tasks", `{}`, tools.InvalidAgentState)
	e.refused("boss", "task_create", `{"title":"x","description":"y","epic_id":"e-0000000000000000"}`, tools.ResourceNotFound)
	e.refused("boss", "task_create", `{"title":"x","description":"y","epic_id":"../../x"}`, tools.ResourceNotFound)
	// a planning agent may use epic tools, but not on an epic it does not run
	e.refused("plan", "task_create", `{"title":"x","description":"y","epic_id":"`+epic+`"}`, tools.PermissionDenied)
	e.refused("plan", "epic_request_changes", `{"task_id":"`+id+`","feedback":"no"}`, tools.PermissionDenied)
	e.refused("boss", "epic_approve_pr", `{"task_id":"`+id+`"}`, tools.InvalidInput) // PENDING, not REVIEW
	e.refused("boss", "epic_create", `{"title":"x","description":"y","branch":"-x"}`, tools.InvalidInput)
	e.refused("boss", "epic_create", `{"title":"x","description":"y","branch":"a..b"}`, tools.InvalidInput)
	e.refused("boss", "epic_list_tasks", `{"state":"DONE"}`, tools.InvalidInput)
	// a task in REVIEW without a pull request cannot be merged
	e.ok("w1", "task_claim", `{"id":"`+id+`"}`)
	e.ok("w1", "task_update_status", `{"id":"`+id+`","state":"REVIEW"}`)
	e.refused("boss", "epic_approve_pr", `{"task_id":"`+id+`"}`, tools.InvalidInput)
	e.refused("boss", "epic_request_changes", `{"task_id":"`+id+`","feedback":" "}`, tools.InvalidInput)
	// a person may act on any epic
	e.ok(human, "epic_request_changes", `{"task_id":"`+id+`","feedback":"more tests"}`)
}

func TestTaskStateMachine(t *testing.T) {
	e := taskTeam(t)
	id := e.newTask("boss", "Add auth")
	e.refused("boss", "task_update_status", `{"id":"`+id+`","state":"REVIEW"}`, tools.InvalidInput) // nobody holds it
	e.ok("w1", "task_claim", `{"id":"`+id+`"}`)
	// IN_PROGRESS -> COMPLETED skips review: refused, for the holder and the creator
	e.refused("w1", "task_update_status", `{"id":"`+id+`","state":"COMPLETED"}`, tools.InvalidInput)
	e.refused("boss", "task_update_status", `{"id":"`+id+`","state":"COMPLETED"}`, tools.InvalidInput)
	e.ok("w1", "task_update_status", `{"id":"`+id+`","state":"REVIEW"}`)
	if tk := e.taskAt(id); tk.SubmittedAt == nil || !tk.SubmittedAt.Equal(tk.UpdatedAt) {
		t.Errorf("REVIEW without a submission time: %+v", tk)
	}
	// the holder does not approve its own work
	e.refused("w1", "task_update_status", `{"id":"`+id+`","state":"COMPLETED"}`, tools.InvalidInput)
	e.ok("w1", "task_update_status", `{"id":"`+id+`","state":"IN_PROGRESS"}`)
	e.ok("w1", "task_update_status", `{"id":"`+id+`","state":"REVIEW"}`)
	e.ok("boss", "task_update_status", `{"id":"`+id+`","state":"COMPLETED"}`)

	// with task.allow_skip_review on, a holder may finish on its own
	e.ok(human, "config_set", `{"key":"task.allow_skip_review","value":"on"}`)
	id2 := e.newTask("boss", "Small fix")
	e.ok("w2", "task_claim", `{"id":"`+id2+`"}`)
	e.ok("w2", "task_update_status", `{"id":"`+id2+`","state":"COMPLETED"}`)
}

func TestTaskAddComment(t *testing.T) {
	e := taskTeam(t)
	id := e.newTask("boss", "Add auth")
	c := e.ok("w2", "task_add_comment", `{"task_id":"`+id+`","body":"I can take this after lunch"}`)
	path := "comments/" + id + "/" + gitstate.Fanout(c["id"].(string)) + "/" + c["id"].(string) + ".json"
	raw := gitstatetest.Git(t, e.dir, "show", gitstate.RefState+":"+path)
	if !strings.Contains(raw, `"author": "w2"`) || !strings.Contains(raw, `"kind": "comment"`) {
		t.Errorf("comment record:\n%s", raw)
	}
	e.refused("w2", "task_add_comment", `{"task_id":"t-0000000000000000","body":"x"}`, tools.ResourceNotFound)
	e.refused("w2", "task_add_comment", `{"task_id":"`+id+`","body":""}`, tools.InvalidInput)
	e.ok("w1", "task_claim", `{"id":"`+id+`"}`)
	g := e.ok("w1", "agent_get_task", `{}`)
	if cs := g["comments"].([]any); len(cs) != 1 {
		t.Errorf("comments w1 sees = %v", cs)
	}
}

// TestEpicReadFile: a file of the worker's worktree or branch; paths that
// leave the tree (.., absolute, symbolic links out) are refused.
func TestEpicReadFile(t *testing.T) {
	e, _ := epicEnv(t)
	epic := e.newEpic("boss")
	id := e.epicTask("boss", epic, "Profile page")
	e.ok("w1", "task_claim", `{"id":"`+id+`"}`)

	wt := filepath.Join(t.TempDir(), "w1")
	gitstatetest.Git(t, e.dir, "worktree", "add", "-q", "-b", "codex/w1", wt, "HEAD")
	os.MkdirAll(filepath.Join(wt, "src"), 0o755)
	os.WriteFile(filepath.Join(wt, "src", "auth.go"), []byte("package auth\n"), 0o644)
	gitstatetest.Git(t, wt, "add", ".")
	gitstatetest.Git(t, wt, "commit", "-qm", "auth")
	os.WriteFile(filepath.Join(wt, "src", "auth.go"), []byte("package auth // edited\n"), 0o644)
	secret := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(secret, []byte("outside"), 0o644)
	os.Symlink(secret, filepath.Join(wt, "out"))
	os.Symlink("src/auth.go", filepath.Join(wt, "in"))
	os.Symlink("../../etc/passwd", filepath.Join(wt, "src", "up"))
	os.WriteFile(filepath.Join(wt, "bin"), []byte{0xff, 0xfe, 0}, 0o644)

	var a tools.Agent
	json.Unmarshal([]byte(gitstatetest.Git(t, e.dir, "show", gitstate.RefState+":agents/w1.json")), &a)
	a.Worktree, a.Branch = wt, "codex/w1"
	rec, _ := json.Marshal(a)
	put, _ := json.Marshal(map[string]any{"path": "agents/w1.json", "record": json.RawMessage(rec)})
	e.ok(human, "test_put", string(put))

	read := func(path, source string) map[string]any {
		args, _ := json.Marshal(map[string]string{"task_id": id, "file_path": path, "source": source})
		return e.ok("boss", "epic_read_file", string(args))
	}
	if r := read("src/auth.go", ""); r["content"] != "package auth // edited\n" || r["source"] != "worktree" {
		t.Errorf("worktree read = %v", r)
	}
	if r := read("src/auth.go", "branch"); r["content"] != "package auth\n" || r["from"] != "codex/w1" {
		t.Errorf("branch read = %v", r)
	}
	if r := read("in", ""); r["content"] != "package auth // edited\n" {
		t.Errorf("a link inside the tree = %v", r)
	}
	if r := read("bin", ""); r["encoding"] != "base64" || r["content"] != "//4A" {
		t.Errorf("binary read = %v", r)
	}
	for _, tc := range []struct{ path, source string }{
		{"../secret.txt", ""}, {"src/../../x", ""}, {"/etc/passwd", ""}, {secret, ""}, {".git/config", ""},
		{"out", ""}, {"src/up", ""}, {"src", ""}, {"", ""}, {"src/auth.go", "disk"},
	} {
		args, _ := json.Marshal(map[string]string{"task_id": id, "file_path": tc.path, "source": tc.source})
		r := e.call("boss", "epic_read_file", string(args))
		if r.OK || (r.Error.Code != tools.InvalidInput && r.Error.Code != tools.ResourceNotFound) {
			t.Errorf("read %q: %+v", tc.path, r)
		}
		if r.OK && strings.Contains(fmt.Sprint(r.Data), "outside") {
			t.Errorf("read %q leaked a file outside the tree", tc.path)
		}
	}
	if r := e.call("boss", "epic_read_file", `{"task_id":"`+id+`","file_path":"missing.go"}`); r.OK || r.Error.Code != tools.ResourceNotFound {
		t.Errorf("missing file: %+v", r)
	}
	// a symbolic link committed on the branch is not followed
	gitstatetest.Git(t, wt, "add", "out")
	gitstatetest.Git(t, wt, "commit", "-qm", "link")
	if r := e.call("boss", "epic_read_file", `{"task_id":"`+id+`","file_path":"out","source":"branch"}`); r.OK || r.Error.Code != tools.InvalidInput {
		t.Errorf("link on the branch: %+v", r)
	}
	e.refused("w2", "epic_read_file", `{"task_id":"`+id+`","file_path":"src/auth.go"}`, tools.PermissionDenied)
}

// TestEpicKindsValidate: an epic or comment arriving by sync must decode
// and belong at its path.
func TestEpicKindsValidate(t *testing.T) {
	e, _ := epicEnv(t)
	epic := e.newEpic("boss")
	id := e.epicTask("boss", epic, "Profile page")
	c := e.ok("boss", "task_add_comment", `{"task_id":"`+id+`","body":"hi"}`)["id"].(string)
	epicRec := gitstatetest.Git(t, e.dir, "show", gitstate.RefState+":epics/"+gitstate.Fanout(epic)+"/"+epic+".json")
	commentPath := "comments/" + id + "/" + gitstate.Fanout(c) + "/" + c + ".json"
	commentRec := gitstatetest.Git(t, e.dir, "show", gitstate.RefState+":"+commentPath)
	// A fanout the epic's id does not name: its ids' last two characters
	// are random, so a fixed "0/0" is the right one once in 1,024 runs.
	wrongFanout := "0/0"
	if gitstate.Fanout(epic) == wrongFanout {
		wrongFanout = "1/1"
	}
	for _, tc := range []struct {
		path, data string
		ok         bool
	}{
		{"epics/" + gitstate.Fanout(epic) + "/" + epic + ".json", epicRec, true},
		{"epics/" + wrongFanout + "/" + epic + ".json", epicRec, false},
		{"epics/" + gitstate.Fanout(epic) + "/" + epic + ".json", strings.Replace(epicRec, `"IN_PROGRESS"`, `"DONE"`, 1), false},
		{commentPath, commentRec, true},
		{"comments/t-0000000000000000/" + gitstate.Fanout(c) + "/" + c + ".json", commentRec, false},
		{commentPath, strings.Replace(commentRec, `"kind": "comment"`, `"kind": "vote"`, 1), false},
	} {
		if err := builtin.Registry().Kinds().ValidateRecord(tc.path, []byte(tc.data)); (err == nil) != tc.ok {
			t.Errorf("ValidateRecord(%s) = %v, want ok=%v", tc.path, err, tc.ok)
		}
	}
}

// TestAgentStatusFollowsHeldTasks: BUSY while an agent holds a task,
// whichever way it got it and however it let go of one.
func TestAgentStatusFollowsHeldTasks(t *testing.T) {
	e := taskTeam(t)
	status := func(w string) (string, string) {
		s := e.ok(w, "agent_get_status", `{}`)
		cur, _ := s["current_task_id"].(string)
		return s["state"].(string), cur
	}
	a, b := e.newTask("boss", "First"), e.newTask("boss", "Second")
	e.ok("w1", "task_claim", `{"id":"`+a+`"}`)
	e.ok("boss", "task_assign", `{"id":"`+b+`","agent":"w1"}`)
	if st, cur := status("w1"); st != work.StateBusy || cur != a {
		t.Fatalf("holding two: %s %s, want BUSY %s", st, cur, a)
	}
	e.ok("w1", "task_release", `{"id":"`+a+`"}`)
	if st, cur := status("w1"); st != work.StateBusy || cur != b {
		t.Errorf("after releasing one: %s %s, want BUSY %s", st, cur, b)
	}
	e.ok("w1", "task_update_status", `{"id":"`+b+`","state":"REVIEW"}`)
	if st, cur := status("w1"); st != work.StateBusy || cur != b {
		t.Errorf("in review: %s %s, want BUSY %s", st, cur, b)
	}
	e.ok("boss", "task_update_status", `{"id":"`+b+`","state":"COMPLETED"}`)
	if st, cur := status("w1"); st != "idle" || cur != "" {
		t.Errorf("after its last task completed: %s %s, want idle", st, cur)
	}
	if raw := gitstatetest.Git(t, e.dir, "show", gitstate.RefState+":agents/w1.json"); strings.Contains(raw, "held_tasks") {
		t.Errorf("w1 holds nothing but its record lists:\n%s", raw)
	}
	// someone else's task w2 took by force-release and claim is not w1's
	c := e.newTask("boss", "Third")
	e.ok("w1", "task_claim", `{"id":"`+c+`"}`)
	e.ok("boss", "task_release", `{"id":"`+c+`","force":true}`)
	e.ok("w2", "task_claim", `{"id":"`+c+`"}`)
	if st, _ := status("w1"); st != "idle" {
		t.Errorf("w1 after its task was taken: %s", st)
	}
	if st, cur := status("w2"); st != work.StateBusy || cur != c {
		t.Errorf("w2: %s %s", st, cur)
	}
}

// workTrees names the state's tasks, epics and comments as they are: equal
// values, nothing of them changed.
func (e *env) workTrees() string {
	e.t.Helper()
	var out []string
	for _, dir := range []string{"tasks", "epics", "comments"} {
		h, err := exec.Command("git", "-C", e.dir, "rev-parse", "-q", "--verify", gitstate.RefState+":"+dir).Output()
		if err != nil {
			h = []byte("none")
		}
		out = append(out, strings.TrimSpace(string(h)))
	}
	return strings.Join(out, " ")
}

// tip is the state's tip commit.
// tip marks the audit trail as it is now: the heads of the state and of
// the reads refs, as the exclusions `git log` takes (since).
func (e *env) tip() string {
	return gitstatetest.Git(e.t, e.dir, "for-each-ref", "--format=^%(objectname)", gitstate.RefState, gitstate.ReadsPrefix)
}

// since is `git log` with format of what the audit trail got after tip:
// on the state and on the reads refs.
func (e *env) since(tip, format string) string {
	e.t.Helper()
	args := append([]string{"log", "--format=" + format}, strings.Fields(tip)...)
	return gitstatetest.Git(e.t, e.dir, append(args, gitstate.RefState, "--glob="+gitstate.ReadsPrefix+"*/*")...)
}

// failureRecorded checks that a commit since tip records a failure with
// code that follows the call's intent (Codex-Follows): whatever else
// comes after it (an escalation mail), the failure is in the trail.
func (e *env) failureRecorded(tip string, code tools.Code) {
	e.t.Helper()
	log := e.since(tip, "%B%x00")
	for _, msg := range strings.Split(log, "\x00") {
		if strings.Contains(msg, "Codex-Error: "+string(code)) && strings.Contains(msg, "Codex-Follows: ") {
			return
		}
	}
	e.t.Errorf("no commit since %s records the failure %s after its intent:\n%s", tip, code, log)
}

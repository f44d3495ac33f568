package builtin_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/work"
)

// taskFile is where a task's record lives in the state tree.
func taskFile(id string) string {
	return "tasks/" + gitstate.Fanout(id) + "/" + id + ".json"
}

// taskAt reads a task's record from the state tree, as committed.
func (e *env) taskAt(id string) work.Task {
	e.t.Helper()
	var tk work.Task
	raw := gitstatetest.Git(e.t, e.dir, "show", gitstate.RefState+":"+taskFile(id))
	if err := json.Unmarshal([]byte(raw), &tk); err != nil {
		e.t.Fatalf("task record %s: %v\n%s", id, err, raw)
	}
	return tk
}

// taskBlob is the hash of a task's record: equal hashes, same record.
func (e *env) taskBlob(id string) string {
	return gitstatetest.Git(e.t, e.dir, "rev-parse", gitstate.RefState+":"+taskFile(id))
}

// lastMessage is the message of the latest call's audit commit.
func (e *env) lastMessage() string {
	e.t.Helper()
	return e.audit(e.last)
}

// refused calls a tool that must fail with code, and checks the refusal
// is an audit commit naming the code that leaves the state tree alone.
func (e *env) refused(caller, tool, args string, code tools.Code) *tools.Error {
	e.t.Helper()
	tree, n := e.tree(), e.commits()
	r := e.call(caller, tool, args)
	if r.OK || r.Error == nil || r.Error.Code != code {
		e.t.Fatalf("%s %s %s: got %+v, want %s", caller, tool, args, r, code)
	}
	if r.Error.Message == "" {
		e.t.Errorf("%s %s: error without a message", caller, tool)
	}
	if e.tree() != tree || e.commits() != n {
		e.t.Errorf("%s %s: the refusal moved the state", caller, tool)
	}
	if msg := e.audit(r); !strings.Contains(msg, "Codex-Error: "+string(code)) || !strings.Contains(msg, "Codex-Tool: "+tool) {
		e.t.Errorf("%s %s: audit trailers:\n%s", caller, tool, msg)
	}
	return r.Error
}

// taskTeam is a repo with a supervisor, two workers and a reviewer.
func taskTeam(t *testing.T) *env {
	e := newEnv(t)
	e.ok(human, "agent_register", `{"id":"boss","type":"supervisor"}`)
	e.ok(human, "agent_register", `{"id":"w1","type":"worker"}`)
	e.ok(human, "agent_register", `{"id":"w2","type":"worker"}`)
	e.ok(human, "agent_register", `{"id":"rev","type":"review"}`)
	return e
}

func (e *env) newTask(caller, title string) string {
	e.t.Helper()
	args, _ := json.Marshal(map[string]string{"title": title, "description": "do " + title})
	return e.ok(caller, "task_create", string(args))["id"].(string)
}

func TestTaskLifecycle(t *testing.T) {
	e := taskTeam(t)
	out := e.ok("boss", "task_create", `{"title":"Add auth","description":"login and logout"}`)
	id := out["id"].(string)
	if !strings.HasPrefix(id, "t-") || out["state"] != work.TaskPending || out["claim"] != nil {
		t.Fatalf("created %v", out)
	}
	tk := e.taskAt(id)
	if tk.ID != id || tk.Title != "Add auth" || tk.Description != "login and logout" || tk.State != work.TaskPending ||
		tk.Claim != nil || tk.CreatedBy != "boss" || tk.UpdatedBy != "boss" || tk.CreatedAt.IsZero() || tk.Clock == 0 {
		t.Fatalf("record after create: %+v", tk)
	}
	if msg := e.lastMessage(); !strings.Contains(msg, "Codex-Target: "+id) || !strings.Contains(msg, "Codex-Result: ok") {
		t.Errorf("create trailers:\n%s", msg)
	}
	created := tk.Clock

	// w1 claims it: held, IN_PROGRESS, a later clock
	e.ok("w1", "task_claim", `{"id":"`+id+`"}`)
	tk = e.taskAt(id)
	if tk.State != work.TaskInProgress || tk.Claim == nil || tk.Claim.Holder != "w1" || tk.UpdatedBy != "w1" || tk.Clock <= created || tk.Claim.Clock != tk.Clock {
		t.Fatalf("record after claim: %+v", tk)
	}
	var w1 tools.Agent
	json.Unmarshal([]byte(gitstatetest.Git(t, e.dir, "show", gitstate.RefState+":agents/w1.json")), &w1)
	if w1.LastActiveAt == nil {
		t.Errorf("claiming did not mark w1 active")
	}

	// claiming it again: ok, the task record unchanged
	blob := e.taskBlob(id)
	again := e.ok("w1", "task_claim", `{"id":"`+id+`"}`)
	if again["id"] != id || again["claim"].(map[string]any)["holder"] != "w1" {
		t.Errorf("idempotent claim returned %v", again)
	}
	if e.taskBlob(id) != blob {
		t.Errorf("claiming a held task again changed its record")
	}

	// w2 is refused, and nothing changes
	err := e.refused("w2", "task_claim", `{"id":"`+id+`"}`, tools.AlreadyClaimed)
	if err.Details["holder"] != "w1" || err.Details["state"] != work.TaskInProgress {
		t.Errorf("ALREADY_CLAIMED details: %v", err.Details)
	}

	// w2 may not move it along either, nor release it
	e.refused("w2", "task_update_status", `{"id":"`+id+`","state":"REVIEW"}`, tools.PermissionDenied)
	e.refused("w2", "task_release", `{"id":"`+id+`"}`, tools.PermissionDenied)
	e.refused("w2", "task_release", `{"id":"`+id+`","force":true}`, tools.PermissionDenied)

	// the holder submits it; the creator completes it
	e.ok("w1", "task_update_status", `{"id":"`+id+`","state":"REVIEW"}`)
	if tk = e.taskAt(id); tk.State != work.TaskReview || tk.UpdatedBy != "w1" {
		t.Fatalf("record after REVIEW: %+v", tk)
	}
	e.ok("boss", "task_update_status", `{"id":"`+id+`","state":"COMPLETED"}`)
	if tk = e.taskAt(id); tk.State != work.TaskCompleted || tk.UpdatedBy != "boss" || tk.Claim == nil || tk.Claim.Holder != "w1" {
		t.Fatalf("record after COMPLETED: %+v", tk)
	}
	if s := gitstatetest.Git(t, e.dir, "log", "-1", "--format=%s", gitstate.RefState); s != "task_update_status: boss moved task "+id+" from REVIEW to COMPLETED" {
		t.Errorf("summary %q", s)
	}

	// COMPLETED is final
	err = e.refused("w1", "task_update_status", `{"id":"`+id+`","state":"IN_PROGRESS"}`, tools.InvalidInput)
	if err.Details["state"] != work.TaskCompleted {
		t.Errorf("final-state details: %v", err.Details)
	}
	e.refused("w1", "task_release", `{"id":"`+id+`"}`, tools.InvalidInput)
	e.refused("w2", "task_claim", `{"id":"`+id+`"}`, tools.AlreadyClaimed)

	// list by state and holder
	other := e.newTask("boss", "Add billing")
	l := e.ok("w2", "task_list", `{"state":"COMPLETED"}`)
	if l["count"].(float64) != 1 || l["tasks"].([]any)[0].(map[string]any)["id"] != id {
		t.Errorf("list COMPLETED = %v", l)
	}
	l = e.ok("w2", "task_list", `{"state":"PENDING"}`)
	if l["count"].(float64) != 1 || l["tasks"].([]any)[0].(map[string]any)["id"] != other {
		t.Errorf("list PENDING = %v", l)
	}
	l = e.ok("w2", "task_list", `{"holder":"w1"}`)
	if l["count"].(float64) != 1 {
		t.Errorf("list holder w1 = %v", l)
	}
	l = e.ok("w2", "task_list", `{}`)
	tasks := l["tasks"].([]any)
	if l["count"].(float64) != 2 || tasks[0].(map[string]any)["id"] != id || tasks[1].(map[string]any)["id"] != other {
		t.Errorf("list all, oldest first = %v", l)
	}
	e.refused("w2", "task_list", `{"state":"DONE"}`, tools.InvalidInput)

	// show
	if got := e.ok("rev", "task_show", `{"id":"`+other+`"}`); got["title"] != "Add billing" || got["state"] != work.TaskPending {
		t.Errorf("show = %v", got)
	}
}

func TestTaskRefusals(t *testing.T) {
	e := taskTeam(t)
	id := e.newTask(human, "Write docs")

	// who may create and claim is the policy's say
	e.refused("w1", "task_create", `{"title":"t","description":"d"}`, tools.PermissionDenied)
	e.refused("rev", "task_create", `{"title":"t","description":"d"}`, tools.PermissionDenied)
	e.refused("rev", "task_claim", `{"id":"`+id+`"}`, tools.PermissionDenied)
	e.refused("w1", "task_assign", `{"id":"`+id+`","agent":"w1"}`, tools.PermissionDenied)
	if msg := e.lastMessage(); !strings.Contains(msg, "Codex-Actor-Type: worker") {
		t.Errorf("denial lacks the caller's type:\n%s", msg)
	}

	// input checks
	e.refused("boss", "task_create", `{"title":"  ","description":"d"}`, tools.InvalidInput)
	e.refused("boss", "task_create", `{"title":"t","description":""}`, tools.InvalidInput)
	e.refused("boss", "task_create", `{"title":"t"}`, tools.InvalidInput)
	e.refused("boss", "task_create", `{"title":"`+strings.Repeat("x", 64*1024)+`","description":"d"}`, tools.InvalidInput)

	// ids that name no task, including ones that must not reach a path
	for _, bad := range []string{"t-0000000000000000", "../../config/config", "t-..", "", "T-0000000000000000"} {
		args, _ := json.Marshal(map[string]string{"id": bad})
		for _, tool := range []string{"task_show", "task_claim", "task_release"} {
			err := e.refused("w1", tool, string(args), tools.ResourceNotFound)
			if err.Details["task_id"] != bad {
				t.Errorf("%s %q details: %v", tool, bad, err.Details)
			}
		}
	}
	if err := e.refused("w1", "task_show", `{"id":"t-0000000000000000"}`, tools.ResourceNotFound); !strings.Contains(err.Message, "git codex task list") {
		t.Errorf("not-found message: %s", err.Message)
	}

	// status: unknown states, PENDING, and an open task moves only to CANCELLED
	e.refused("boss", "task_update_status", `{"id":"`+id+`","state":"done"}`, tools.InvalidInput)
	e.refused("boss", "task_update_status", `{"id":"`+id+`","state":"PENDING"}`, tools.InvalidInput)
	e.refused("boss", "task_update_status", `{"id":"`+id+`","state":"REVIEW"}`, tools.InvalidInput)
	e.refused(human, "task_update_status", `{"id":"`+id+`","state":"IN_PROGRESS"}`, tools.InvalidInput)
	// nobody holds it and w1 did not create it
	e.refused("w1", "task_update_status", `{"id":"`+id+`","state":"CANCELLED"}`, tools.PermissionDenied)

	// release: not claimed
	err := e.refused("w1", "task_release", `{"id":"`+id+`"}`, tools.InvalidInput)
	if !strings.Contains(err.Message, "not claimed") {
		t.Errorf("release of an open task: %s", err.Message)
	}

	// assign: unknown agent
	e.refused("boss", "task_assign", `{"id":"`+id+`","agent":"ghost"}`, tools.AgentNotFound)

	// the creator cancels it: final, and it can no longer be claimed
	e.ok(human, "task_update_status", `{"id":"`+id+`","state":"CANCELLED"}`)
	if tk := e.taskAt(id); tk.State != work.TaskCancelled || tk.Claim != nil {
		t.Fatalf("record after CANCELLED: %+v", tk)
	}
	err = e.refused("w1", "task_claim", `{"id":"`+id+`"}`, tools.AlreadyClaimed)
	if err.Details["holder"] != "" || err.Details["state"] != work.TaskCancelled {
		t.Errorf("claim of a cancelled task: %v", err.Details)
	}
	e.refused("boss", "task_assign", `{"id":"`+id+`","agent":"w1"}`, tools.AlreadyClaimed)
	// cancelling it again is a retry: ok, nothing changes; reopening is refused
	before := e.taskAt(id)
	e.ok(human, "task_update_status", `{"id":"`+id+`","state":"CANCELLED"}`)
	if after := e.taskAt(id); after.Clock != before.Clock {
		t.Errorf("a repeated CANCELLED changed the task: %+v", after)
	}
	e.refused(human, "task_update_status", `{"id":"`+id+`","state":"IN_PROGRESS"}`, tools.InvalidInput)
}

func TestTaskAssignMailsTheAssignee(t *testing.T) {
	e := taskTeam(t)
	id := e.newTask("boss", "Fix the flaky test")
	e.ok("boss", "task_assign", `{"id":"`+id+`","agent":"w2"}`)
	tk := e.taskAt(id)
	if tk.State != work.TaskInProgress || tk.Claim == nil || tk.Claim.Holder != "w2" || tk.UpdatedBy != "boss" {
		t.Fatalf("record after assign: %+v", tk)
	}
	if msg := e.lastMessage(); !strings.Contains(msg, "Codex-Target: "+id) {
		t.Errorf("assign trailers:\n%s", msg)
	}
	inbox := e.ok("w2", "mail_list_inbox", `{}`)
	if inbox["count"].(float64) != 1 {
		t.Fatalf("w2 inbox = %v", inbox)
	}
	m := inbox["mails"].([]any)[0].(map[string]any)
	if m["from"] != "boss" || m["subject"] != "Task assigned: Fix the flaky test" ||
		!strings.Contains(m["body"].(string), id) || !strings.Contains(m["body"].(string), "do Fix the flaky test") {
		t.Errorf("assignment mail = %v", m)
	}

	// assigning it to its holder again changes nothing and sends no mail
	blob := e.taskBlob(id)
	e.ok("boss", "task_assign", `{"id":"`+id+`","agent":"w2"}`)
	if e.taskBlob(id) != blob {
		t.Errorf("re-assigning to the holder changed the record")
	}
	if n := e.ok("w2", "mail_list_inbox", `{}`)["count"].(float64); n != 1 {
		t.Errorf("re-assigning mailed again: %v mails", n)
	}
	// to someone else it is refused, naming the holder
	err := e.refused("boss", "task_assign", `{"id":"`+id+`","agent":"w1"}`, tools.AlreadyClaimed)
	if err.Details["holder"] != "w2" {
		t.Errorf("details %v", err.Details)
	}
	// the assignee works it like a claimed task
	e.ok("w2", "task_update_status", `{"id":"`+id+`","state":"REVIEW"}`)
	if tk := e.taskAt(id); tk.State != work.TaskReview {
		t.Errorf("state %s", tk.State)
	}
}

func TestTaskRelease(t *testing.T) {
	e := taskTeam(t)
	id := e.newTask("boss", "Port the parser")

	// the holder gives it back: open and PENDING, claimable by anyone
	e.ok("w1", "task_claim", `{"id":"`+id+`"}`)
	e.ok("w1", "task_release", `{"id":"`+id+`"}`)
	if tk := e.taskAt(id); tk.State != work.TaskPending || tk.Claim != nil || tk.UpdatedBy != "w1" {
		t.Fatalf("record after release: %+v", tk)
	}
	e.ok("w2", "task_claim", `{"id":"`+id+`"}`)
	e.ok("w2", "task_update_status", `{"id":"`+id+`","state":"REVIEW"}`)

	// a supervisor needs force, and then the holder is mailed
	err := e.refused("boss", "task_release", `{"id":"`+id+`"}`, tools.PermissionDenied)
	if err.Details["holder"] != "w2" {
		t.Errorf("details %v", err.Details)
	}
	before := e.ok("w2", "mail_list_inbox", `{}`)["count"].(float64)
	e.ok("boss", "task_release", `{"id":"`+id+`","force":true}`)
	if tk := e.taskAt(id); tk.State != work.TaskPending || tk.Claim != nil || tk.UpdatedBy != "boss" {
		t.Fatalf("record after forced release: %+v", tk)
	}
	inbox := e.ok("w2", "mail_list_inbox", `{}`)
	if inbox["count"].(float64) != before+1 {
		t.Fatalf("holder not mailed: %v", inbox)
	}
	m := inbox["mails"].([]any)[0].(map[string]any)
	if m["from"] != "boss" || !strings.Contains(m["subject"].(string), id) || !strings.Contains(m["body"].(string), "released by boss") {
		t.Errorf("forced-release mail = %v", m)
	}

	// a person's claim, released by a supervisor: the humans' inbox hears of it
	e.ok(human, "task_claim", `{"id":"`+id+`"}`)
	e.ok("boss", "task_release", `{"id":"`+id+`","force":true}`)
	hi := e.ok(human, "mail_list_inbox", `{}`)
	if hi["count"].(float64) != 1 || hi["mails"].([]any)[0].(map[string]any)["to"] != "human" {
		t.Errorf("humans' inbox = %v", hi)
	}
	// a worker cannot force
	e.ok("w1", "task_claim", `{"id":"`+id+`"}`)
	e.refused("w2", "task_release", `{"id":"`+id+`","force":true}`, tools.PermissionDenied)
	if tk := e.taskAt(id); tk.Claim == nil || tk.Claim.Holder != "w1" {
		t.Errorf("after refused force: %+v", tk)
	}
}

// TestTaskAssignChecksTheAssigneesPolicy: a task goes only to an agent
// whose policy lets it move the task along; a reviewer's does not, until a
// person changes the policy.
func TestTaskAssignChecksTheAssigneesPolicy(t *testing.T) {
	e := taskTeam(t)
	id := e.newTask("boss", "Review the schema")
	err := e.refused("boss", "task_assign", `{"id":"`+id+`","agent":"rev"}`, tools.InvalidInput)
	if err.Details["agent_type"] != "review" {
		t.Errorf("details %v", err.Details)
	}
	if tk := e.taskAt(id); tk.Claim != nil || tk.State != work.TaskPending {
		t.Errorf("task after a refused assign: %+v", tk)
	}
	e.ok(human, "config_set", `{"key":"policy.review.allow","value":"mail.*,agent.get_status,task.*"}`)
	e.ok("boss", "task_assign", `{"id":"`+id+`","agent":"rev"}`)
	if tk := e.taskAt(id); tk.Claim == nil || tk.Claim.Holder != "rev" {
		t.Errorf("task after assign: %+v", tk)
	}
}

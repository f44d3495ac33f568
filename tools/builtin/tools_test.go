package builtin_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
)

const human = "human:test@example.com"

type env struct {
	t   *testing.T
	dir string
	st  *gitstate.Store
	reg *tools.Registry
	// last is what the latest e.call answered: its Commit is the call's
	// audit record, wherever it went (the state, or the reads ref).
	last tools.Result
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, gitstate.Options{})
}

// newEnvWith is newEnv with the store opened with opts (a clock of the
// test's own, for one).
func newEnvWith(t *testing.T, opts gitstate.Options) *env {
	t.Helper()
	dir := gitstatetest.NewRepo(t)
	st, err := gitstate.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := builtin.Registry().Init(context.Background(), st, tools.Origin{ID: human}); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, dir: dir, st: st, reg: builtin.Registry()}
	return e
}

func (e *env) call(caller, tool, args string) tools.Result {
	e.t.Helper()
	e.last = e.reg.CallAs(context.Background(), e.st, tools.Origin{ID: caller}, tool, json.RawMessage(args))
	return e.last
}

func (e *env) ok(caller, tool, args string) map[string]any {
	e.t.Helper()
	r := e.call(caller, tool, args)
	if !r.OK {
		e.t.Fatalf("%s %s %s: %+v", caller, tool, args, r.Error)
	}
	b, _ := json.Marshal(r.Data)
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

func (e *env) commits() string {
	return gitstatetest.Git(e.t, e.dir, "rev-list", "--count", gitstate.RefState)
}

func (e *env) tree() string {
	return gitstatetest.Git(e.t, e.dir, "rev-parse", gitstate.RefState+"^{tree}")
}

// audit is the message of the audit commit a call returned: on the state
// for a call that changed it, on this machine's reads ref for a read or a
// refusal (gitstate/reads.go).
func (e *env) audit(r tools.Result) string {
	e.t.Helper()
	if r.Commit == "" {
		e.t.Fatalf("the call wrote no audit commit: %+v", r)
	}
	return gitstatetest.Git(e.t, e.dir, "show", "-s", "--format=%B", r.Commit)
}

// auditTrailer is one trailer of the audit commit a call returned.
func (e *env) auditTrailer(r tools.Result, key string) string {
	e.t.Helper()
	if r.Commit == "" {
		e.t.Fatalf("the call wrote no audit commit: %+v", r)
	}
	return gitstatetest.Git(e.t, e.dir, "show", "-s", "--format=%(trailers:key="+key+",valueonly)", r.Commit)
}

// trail is the whole audit trail, newest first: the state's history and
// the reads and refusals on the reads refs.
func (e *env) trail(format string) string {
	e.t.Helper()
	return gitstatetest.Git(e.t, e.dir, "log", "--format="+format, gitstate.RefState, "--glob="+gitstate.ReadsPrefix+"*/*")
}

func TestMailRoundTrip(t *testing.T) {
	e := newEnv(t)
	e.ok(human, "agent_register", `{"id":"alice","type":"worker"}`)
	e.ok(human, "agent_register", `{"id":"bob","type":"supervisor"}`)
	sent := e.ok("alice", "mail_send", `{"to":"bob","subject":"Blocked","body":"need help"}`)
	id := sent["mail_id"].(string)
	if !strings.HasPrefix(id, "m-") {
		t.Fatalf("mail id %q", id)
	}
	inbox := e.ok("bob", "mail_list_inbox", `{}`)
	if inbox["count"].(float64) != 1 || inbox["unread_count"].(float64) != 1 {
		t.Fatalf("inbox = %v", inbox)
	}
	// only the recipient reads it
	if r := e.call("alice", "mail_read", `{"mail_id":"`+id+`"}`); r.OK || r.Error.Code != tools.PermissionDenied {
		t.Fatalf("alice reads bob's mail: %+v", r)
	}
	m := e.ok("bob", "mail_read", `{"mail_id":"`+id+`"}`)
	if m["is_read"] != true || m["from"] != "alice" {
		t.Fatalf("read = %v", m)
	}
	if got := e.ok("bob", "mail_list_inbox", `{}`)["count"].(float64); got != 0 {
		t.Errorf("unread after read = %v", got)
	}
	if got := e.ok("bob", "mail_list_inbox", `{"include_read":true}`)["count"].(float64); got != 1 {
		t.Errorf("include_read = %v", got)
	}
	rep := e.ok("bob", "mail_reply", `{"original_mail_id":"`+id+`","body":"on my way"}`)
	if rep["to"] != "alice" {
		t.Errorf("reply to = %v", rep["to"])
	}
	inbox = e.ok("alice", "mail_list_inbox", `{}`)
	mails := inbox["mails"].([]any)
	first := mails[0].(map[string]any)
	if first["subject"] != "Re: Blocked" || first["in_reply_to"] != id {
		t.Errorf("reply = %v", first)
	}
	// "Re: " is added once
	e.ok("alice", "mail_reply", `{"original_mail_id":"`+first["id"].(string)+`","body":"thanks"}`)
	inbox = e.ok("bob", "mail_list_inbox", `{}`)
	if s := inbox["mails"].([]any)[0].(map[string]any)["subject"]; s != "Re: Blocked" {
		t.Errorf("re-reply subject = %v", s)
	}
	// to the humans, and a person replies
	h := e.ok("alice", "mail_send", `{"to_human":true,"subject":"FYI","body":"done"}`)
	if h["to"] != "human" {
		t.Errorf("to_human recipient = %v", h["to"])
	}
	hm := e.ok(human, "mail_read", `{"mail_id":"`+h["mail_id"].(string)+`"}`)
	if hm["to"] != "human" {
		t.Errorf("human read = %v", hm)
	}
	msg := gitstatetest.Git(t, e.dir, "log", "-1", "--format=%B", gitstate.RefState)
	if !strings.Contains(msg, "Codex-Tool: mail_read") || !strings.Contains(msg, "Codex-Actor: "+human) || !strings.Contains(msg, "Codex-Result: ok") {
		t.Errorf("trailers:\n%s", msg)
	}
}

func TestRefusalsCommitAuditOnly(t *testing.T) {
	e := newEnv(t)
	e.ok(human, "agent_register", `{"id":"w1","type":"worker"}`)
	e.ok(human, "agent_register", `{"id":"orc","type":"orchestrator"}`)
	big := strings.Repeat("x", 64*1024+1)
	tests := []struct {
		name, caller, tool, args string
		code                     tools.Code
	}{
		{"unknown tool", "w1", "no_such_tool", `{}`, tools.ToolNotFound},
		{"malformed json", "w1", "mail_send", `{"to":`, tools.InvalidInput},
		{"not an object", "w1", "mail_send", `[1,2]`, tools.InvalidInput},
		{"unknown field", "w1", "mail_send", `{"to":"w1","subject":"s","body":"b","cc":"x"}`, tools.InvalidInput},
		{"missing required", "w1", "mail_send", `{"to":"w1","subject":"s"}`, tools.InvalidInput},
		{"wrong type", "w1", "mail_send", `{"to":"w1","subject":1,"body":"b"}`, tools.InvalidInput},
		{"both recipients", "w1", "mail_send", `{"to":"w1","to_human":true,"subject":"s","body":"b"}`, tools.InvalidInput},
		{"no recipient", "w1", "mail_send", `{"subject":"s","body":"b"}`, tools.InvalidInput},
		{"unknown recipient", "w1", "mail_send", `{"to":"ghost","subject":"s","body":"b"}`, tools.AgentNotFound},
		{"oversize body", "w1", "mail_send", `{"to":"w1","subject":"s","body":"` + big + `"}`, tools.InvalidInput},
		{"unregistered caller", "ghost", "mail_list_inbox", `{}`, tools.AgentNotFound},
		{"bad caller id", "../x", "mail_list_inbox", `{}`, tools.AgentNotFound},
		{"wrong caller type", "w1", "agent_list", `{}`, tools.PermissionDenied},
		{"worker sets config", "w1", "config_set", `{"key":"mail.max_body_bytes","value":"1"}`, tools.PermissionDenied},
		{"forbidden, with bad arguments: permission first", "w1", "task_create", `{"title":7,"bogus":true}`, tools.PermissionDenied},
		{"missing mail", "w1", "mail_read", `{"mail_id":"m-0000000000zzzzzz"}`, tools.ResourceNotFound},
		{"duplicate agent", human, "agent_register", `{"id":"w1","type":"worker"}`, tools.AlreadyExists},
		{"bad type", human, "agent_register", `{"id":"w2","type":"wizard"}`, tools.InvalidInput},
		{"orchestrator registers a supervisor", "orc", "agent_register", `{"id":"boss2","type":"supervisor"}`, tools.PermissionDenied},
		{"human id with angle brackets", "human:<a>", "mail_list_inbox", `{}`, tools.AgentNotFound},
		{"mail id with a path", "w1", "mail_read", `{"mail_id":"m-.."}`, tools.ResourceNotFound},
		{"unknown config key", human, "config_set", `{"key":"nope","value":"1"}`, tools.InvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			treeBefore, n := e.tree(), e.commits()
			r := e.call(tt.caller, tt.tool, tt.args)
			if r.OK || r.Error == nil || r.Error.Code != tt.code {
				t.Fatalf("got %+v, want %s", r, tt.code)
			}
			if r.Error.Message == "" || r.Error.Details == nil {
				t.Errorf("error lacks message/details: %+v", r.Error)
			}
			if e.tree() != treeBefore || e.commits() != n {
				t.Errorf("the state moved on refusal")
			}
			msg := e.audit(r)
			if !strings.Contains(msg, gitstate.TrailerReadAt+": ") {
				t.Errorf("the refusal is not recorded as a read:\n%s", msg)
			}
			if !strings.Contains(msg, "Codex-Error: "+string(tt.code)) {
				t.Errorf("audit trailer missing:\n%s", msg)
			}
			if tt.caller == "w1" && !strings.Contains(msg, "Codex-Actor-Type: worker") {
				t.Errorf("refusal lacks the caller's type:\n%s", msg)
			}
			if strings.Contains(msg, strings.Repeat("x", 300)) {
				t.Errorf("audit trailer holds the whole oversize body")
			}
		})
	}
}

func TestPolicyIsEditableAndSecretsRedacted(t *testing.T) {
	e := newEnv(t)
	e.ok(human, "agent_register", `{"id":"w1","type":"worker"}`)
	if r := e.call("w1", "agent_list", `{}`); r.OK {
		t.Fatal("worker may list agents by default")
	}
	e.ok(human, "config_set", `{"key":"policy.worker.allow","value":"mail.*,agent.list,agent.get_status"}`)
	if got := e.ok("w1", "agent_list", `{}`)["count"].(float64); got != 1 {
		t.Errorf("agent_list count = %v", got)
	}
	e.ok(human, "config_set", `{"key":"policy.worker.deny","value":"agent.*"}`)
	if r := e.call("w1", "agent_get_status", `{}`); r.OK || r.Error.Code != tools.PermissionDenied {
		t.Errorf("deny must win: %+v", r)
	}
	cfg := gitstatetest.Git(t, e.dir, "show", gitstate.RefState+":config/config.json")
	if !strings.Contains(cfg, `"agent.list"`) {
		t.Errorf("config record: %s", cfg)
	}
	// an argument that looks like a secret never reaches the trailer
	e.call("w1", "mail_send", `{"to":"w1","subject":"s","body":"b","api_key":"sk-SECRET123"}`)
	all := e.trail("%B")
	if strings.Contains(all, "sk-SECRET123") {
		t.Errorf("secret leaked into the audit trail")
	}
	if !strings.Contains(all, `"api_key":"[redacted]"`) {
		t.Errorf("redaction marker missing")
	}
}

func TestNotInitialised(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	st, _ := gitstate.Open(dir, gitstate.Options{})
	defer st.Close()
	r := builtin.Registry().CallAs(context.Background(), st, tools.Origin{ID: human}, "mail_list_inbox", nil)
	if r.OK || r.Error.Code != tools.NotInitialized {
		t.Fatalf("got %+v", r)
	}
	if _, err := gitstatetest.GitErr(dir, "rev-parse", "--verify", gitstate.RefState); err == nil {
		t.Error("a call before init created the state ref")
	}
}

// TestSchemas infers every builtin tool's schemas (lazily built, so a bad
// type would otherwise panic at a user's first call) and checks the
// required fields the tools rely on.
func TestSchemas(t *testing.T) {
	for _, tool := range builtin.Registry().All() {
		in, out := tool.InputSchema(), tool.OutputSchema()
		if in == nil || in.Type != "object" || out == nil {
			t.Errorf("%s: input %v output %v", tool.Name, in, out)
		}
	}
	send, _ := builtin.Registry().Lookup("mail_send")
	if got := strings.Join(send.InputSchema().Required, ","); got != "subject,body" {
		t.Errorf("mail_send required = %s", got)
	}
}

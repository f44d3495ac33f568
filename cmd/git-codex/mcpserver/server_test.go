package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/github"
	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/gitcodex/git-codex/tools/mail"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const mcpHuman = "human:test@example.com"

// mcpRepo is a temporary repository with initialised state and the agents
// alice (worker) and boss (supervisor).
func mcpRepo(t testing.TB) string {
	t.Helper()
	dir := gitstatetest.NewRepo(t)
	st := mcpStore(t, dir)
	if _, err := builtin.Registry().Init(context.Background(), st, tools.Origin{ID: mcpHuman}); err != nil {
		t.Fatal(err)
	}
	reg := builtin.Registry()
	for _, args := range []string{`{"id":"alice","type":"worker"}`, `{"id":"boss","type":"supervisor"}`} {
		if r := reg.CallAs(context.Background(), st, tools.Origin{ID: mcpHuman}, "agent_register", json.RawMessage(args)); !r.OK {
			t.Fatalf("agent_register %s: %+v", args, r.Error)
		}
	}
	return dir
}

// cliRegistry is the registry `git codex mcp` serves (the CLI's
// builtinRegistry): every tool, reaching GitHub through package github.
func cliRegistry() *tools.Registry {
	return builtin.Registry().WithEnv(tools.Env{GitHub: github.NewCache().Open})
}

func mcpStore(t testing.TB, dir string) *gitstate.Store {
	t.Helper()
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// mcpConnect serves the builtin registry as caller over an in-memory
// transport, with its own store on dir, and returns a connected go-sdk
// client session and the server's log.
func mcpConnect(t *testing.T, dir, caller string) (*mcp.ClientSession, *syncBuffer) {
	t.Helper()
	cs, logs, _ := mcpConnectWith(t, dir, caller, nil, nil)
	return cs, logs
}

// mcpConnectWith is mcpConnect with client options (for notification
// handlers) and session options (for the protocol version), also
// returning the server.
func mcpConnectWith(t *testing.T, dir, caller string, opts *mcp.ClientOptions, sopts *mcp.ClientSessionOptions) (*mcp.ClientSession, *syncBuffer, *Server) {
	t.Helper()
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s := New(cliRegistry(), mcpStore(t, dir), tools.Origin{ID: caller}, Options{Logger: logger})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go s.watch(ctx, time.Hour) // looks after calls; tests that need polling start their own
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, opts).Connect(ctx, ct, sopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs, logs, s
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// envelope is a call's structured content, checked against its text
// content and its isError flag.
type envelope struct {
	OK        bool            `json:"ok"`
	Data      json.RawMessage `json:"data"`
	Error     *tools.Error    `json:"error"`
	Timestamp string          `json:"timestamp"`
}

func mcpCall(t *testing.T, cs *mcp.ClientSession, tool, args string) envelope {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s %s: %v", tool, args, err)
	}
	structured, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var env envelope
	if err := json.Unmarshal(structured, &env); err != nil {
		t.Fatalf("%s: structured content %s: %v", tool, structured, err)
	}
	if env.OK == res.IsError {
		t.Fatalf("%s: isError %v with envelope %s", tool, res.IsError, structured)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content blocks, want the envelope as text", tool, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s: content is %T, want text", tool, res.Content[0])
	}
	var a, b any
	json.Unmarshal([]byte(text.Text), &a)
	json.Unmarshal(structured, &b)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("%s: text content %s differs from structured content %s", tool, text.Text, structured)
	}
	return env
}

// commitCount is the length of the audit trail: the state's commits and
// the reads refs' (reads and refusals, which change nothing).
func commitCount(t *testing.T, dir string) int {
	t.Helper()
	n, err := strconv.Atoi(gitstatetest.Git(t, dir, "rev-list", "--count", gitstate.RefState, "--glob="+gitstate.ReadsPrefix+"*/*"))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// lastAudit is the newest audit commit: the newest read if it read the
// state's tip (a read sees the tip under the writer lock, so one made
// after the tip names it), else the state's tip. Commit times, to the
// second, cannot order the two chains.
func lastAudit(t *testing.T, dir string) string {
	t.Helper()
	tip := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)
	read := gitstatetest.Git(t, dir, "log", "-1", "--format=%H %(trailers:key="+gitstate.TrailerReadAt+",valueonly)", "--glob="+gitstate.ReadsPrefix+"*/*")
	if h, at, ok := strings.Cut(read, " "); ok && at == tip {
		return h
	}
	return tip
}

func lastTrailers(t *testing.T, dir string) string {
	t.Helper()
	return gitstatetest.Git(t, dir, "log", "-1",
		"--format=%(trailers:key=Codex-Tool,valueonly,separator=%x2C)/%(trailers:key=Codex-Actor,valueonly,separator=%x2C)/%(trailers:key=Codex-Result,valueonly,separator=%x2C)%(trailers:key=Codex-Error,valueonly,separator=%x2C)",
		lastAudit(t, dir))
}

// workerTools are the tools tools/list shows a worker up front: of those
// the default policy lets it call, the ones its work uses, and tool_call
// and tool_find for the rest (workerDeferred; tools.Deferred).
var workerTools = []string{
	"agent_get_epic", "agent_get_status", "agent_get_task", "agent_set_status", "create_pull_request", "decision_list", "decision_show",
	"lock_acquire", "lock_list", "lock_release", "log_decision", "mail_list_inbox", "mail_read", "mail_reply", "mail_send", "prompt_search",
	"task_add_comment", "task_claim", "task_list", "task_release", "task_show", "task_update_status", "tool_call", "tool_find",
}

// workerDeferred are the other tools the default policy lets a worker
// call, which tool_call names.
var workerDeferred = []string{
	"agent_abort", "agent_continue", "agent_interrupt", "agent_list_sessions", "agent_query", "agent_query_stream",
	"agent_resume", "agent_rotate_token", "agent_set_model", "agent_set_permission_mode", "conflict_list",
	"cycle_archive", "cycle_complete", "cycle_start", "cycle_status", "handoff_read", "handoff_write",
	"prompt_describe", "prompt_execute", "prompt_reload", "session_open",
}

func TestMCPToolsList(t *testing.T) {
	dir := mcpRepo(t)
	reg := builtin.Registry()
	var all []string
	for _, tool := range reg.All() {
		all = append(all, tool.Name)
	}
	// A worker sees only what its policy allows (not agent_list,
	// config_set, task_create); a person, whose policy allows everything,
	// sees every tool.
	alice, _ := mcpConnect(t, dir, "alice")
	res, err := alice.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(res.Tools); !reflect.DeepEqual(got, workerTools) {
		t.Fatalf("alice's tools/list = %v, want the worker's %v", got, workerTools)
	}
	for _, tool := range res.Tools {
		if tool.Name == "tool_call" && !strings.HasSuffix(tool.Description, ": "+strings.Join(workerDeferred, ", ")+".") {
			t.Errorf("tool_call's description %q does not name the worker's other tools %v", tool.Description, workerDeferred)
		}
	}
	human, _ := mcpConnect(t, dir, mcpHuman)
	res, err = human.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(res.Tools); !reflect.DeepEqual(got, all) {
		t.Fatalf("a person's tools/list = %v, want the registry's %v", got, all)
	}
	for _, tool := range res.Tools {
		rt, _ := reg.Lookup(tool.Name)
		if tool.Description != rt.Description {
			t.Errorf("%s: description %q, want %q", tool.Name, tool.Description, rt.Description)
		}
		var gotSchema, wantSchema any
		remarshal(t, tool.InputSchema, &gotSchema)
		remarshal(t, rt.InputSchema(), &wantSchema)
		if !reflect.DeepEqual(gotSchema, wantSchema) {
			t.Errorf("%s: input schema %v, want %v", tool.Name, gotSchema, wantSchema)
		}
		// The output schema is the envelope's, with the tool's output as
		// data (TestMCPResultsMatchOutputSchemas holds results against it).
		var out struct {
			Type       string         `json:"type"`
			Required   []string       `json:"required"`
			Properties map[string]any `json:"properties"`
			Additional *bool          `json:"additionalProperties"`
		}
		remarshal(t, tool.OutputSchema, &out)
		var wantData any
		remarshal(t, rt.OutputSchema(), &wantData)
		if out.Type != "object" || !reflect.DeepEqual(out.Required, []string{"ok"}) || out.Additional == nil || *out.Additional ||
			!reflect.DeepEqual(out.Properties["data"], wantData) || out.Properties["error"] == nil {
			t.Errorf("%s: output schema %+v is not the envelope of %v", tool.Name, out, wantData)
		}
	}
	for _, tool := range res.Tools {
		if tool.Name != "mail_send" {
			continue
		}
		var s struct {
			Type                 string         `json:"type"`
			Required             []string       `json:"required"`
			Properties           map[string]any `json:"properties"`
			AdditionalProperties *bool          `json:"additionalProperties"`
		}
		remarshal(t, tool.InputSchema, &s)
		if s.Type != "object" || !reflect.DeepEqual(s.Required, []string{"subject", "body"}) {
			t.Errorf("mail_send schema: type %q, required %v; want object, [subject body]", s.Type, s.Required)
		}
		for _, p := range []string{"to", "to_human", "subject", "body"} {
			if _, ok := s.Properties[p]; !ok {
				t.Errorf("mail_send schema has no property %q", p)
			}
		}
		if s.AdditionalProperties == nil || *s.AdditionalProperties {
			t.Errorf("mail_send schema allows unknown fields")
		}
	}
}

func toolNames(ts []*mcp.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func remarshal(t *testing.T, from, to any) {
	t.Helper()
	b, err := json.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, to); err != nil {
		t.Fatal(err)
	}
}

func TestMCPCallRoundTrip(t *testing.T) {
	dir := mcpRepo(t)
	alice, _ := mcpConnect(t, dir, "alice")
	boss, _ := mcpConnect(t, dir, "boss")
	before := commitCount(t, dir)

	env := mcpCall(t, alice, "mail_send", `{"to":"boss","subject":"Blocked","body":"need help"}`)
	var sent mail.MailSent
	if err := json.Unmarshal(env.Data, &sent); err != nil || !strings.HasPrefix(sent.MailID, "m-") || sent.To != "boss" {
		t.Fatalf("mail_send data %s (%v)", env.Data, err)
	}
	if got := lastTrailers(t, dir); got != "mail_send/alice/ok" {
		t.Errorf("last commit trailers %q", got)
	}
	env = mcpCall(t, boss, "mail_list_inbox", `{}`)
	var inbox mail.Inbox
	if err := json.Unmarshal(env.Data, &inbox); err != nil || inbox.Count != 1 || inbox.Mails[0].ID != sent.MailID {
		t.Fatalf("boss's inbox %s (%v)", env.Data, err)
	}
	env = mcpCall(t, boss, "mail_reply", `{"original_mail_id":"`+sent.MailID+`","body":"on it"}`)
	var reply mail.MailSent
	if err := json.Unmarshal(env.Data, &reply); err != nil || reply.To != "alice" {
		t.Fatalf("mail_reply data %s (%v)", env.Data, err)
	}
	env = mcpCall(t, alice, "mail_read", `{"mail_id":"`+reply.MailID+`"}`)
	var m mail.Mail
	if err := json.Unmarshal(env.Data, &m); err != nil || m.Subject != "Re: Blocked" || m.InReplyTo != sent.MailID || !m.IsRead {
		t.Fatalf("mail_read data %s (%v)", env.Data, err)
	}
	if got := commitCount(t, dir) - before; got != 4 {
		t.Errorf("4 calls made %d commits", got)
	}
}

func TestMCPRefusals(t *testing.T) {
	dir := mcpRepo(t)
	alice, logs := mcpConnect(t, dir, "alice")
	ghost, _ := mcpConnect(t, dir, "ghost")
	before := commitCount(t, dir)

	tests := []struct {
		cs       *mcp.ClientSession
		tool     string
		args     string
		code     tools.Code
		trailers string
	}{
		{alice, "agent_list", `{}`, tools.PermissionDenied, "agent_list/alice/PERMISSION_DENIED"},
		// a forbidden call with bad arguments: the permission is checked first
		{alice, "agent_list", `{"type":7,"bogus":true}`, tools.PermissionDenied, "agent_list/alice/PERMISSION_DENIED"},
		{alice, "task_create", `{}`, tools.PermissionDenied, "task_create/alice/PERMISSION_DENIED"},
		{alice, "mail_send", `{"to":"boss","subject":"s","body":"b","cc":"x"}`, tools.InvalidInput, "mail_send/alice/INVALID_INPUT"},
		{alice, "mail_send", `{"to":"nobody","subject":"s","body":"b"}`, tools.AgentNotFound, "mail_send/alice/AGENT_NOT_FOUND"},
		{ghost, "agent_get_status", `{}`, tools.AgentNotFound, "agent_get_status/ghost/AGENT_NOT_FOUND"},
	}
	for i, tt := range tests {
		env := mcpCall(t, tt.cs, tt.tool, tt.args)
		if env.OK || env.Error == nil || env.Error.Code != tt.code || env.Error.Message == "" {
			t.Errorf("%s %s: envelope %+v, want error %s", tt.tool, tt.args, env, tt.code)
		}
		if got := lastTrailers(t, dir); got != tt.trailers {
			t.Errorf("%s %s: last commit %q, want %q", tt.tool, tt.args, got, tt.trailers)
		}
		if got := commitCount(t, dir) - before; got != i+1 {
			t.Errorf("after %d refusals, %d commits", i+1, got)
		}
	}
	if !strings.Contains(logs.String(), `msg="tool refused" tool=agent_list code=PERMISSION_DENIED`) {
		t.Errorf("the server did not log the refusal: %s", logs.String())
	}

	// A tool the server does not have gets the envelope and the audit
	// record `git codex call` gives it: TOOL_NOT_FOUND, one commit.
	n := commitCount(t, dir)
	env := mcpCall(t, alice, "no_such_tool", `{}`)
	if env.OK || env.Error.Code != tools.ToolNotFound || env.Error.Details["tool"] != "no_such_tool" {
		t.Errorf("unknown tool: envelope %+v", env)
	}
	if got := lastTrailers(t, dir); got != "no_such_tool/alice/TOOL_NOT_FOUND" {
		t.Errorf("unknown tool: last commit %q", got)
	}
	if got := commitCount(t, dir) - n; got != 1 {
		t.Errorf("an unknown tool made %d commits, want its audit record", got)
	}
	cli := builtin.Registry().CallAs(context.Background(), mcpStore(t, dir), tools.Origin{ID: "alice"}, "no_such_tool", json.RawMessage(`{}`))
	if env.Timestamp == "" || cli.Timestamp == "" {
		t.Errorf("envelopes without a timestamp: MCP %q, call %q", env.Timestamp, cli.Timestamp)
	}
	cli.Timestamp = "" // the two answered at different times
	want, _ := json.Marshal(cli)
	got, _ := json.Marshal(tools.Result{OK: env.OK, Error: env.Error})
	if string(got) != string(want) || env.Error.ToolName != "no_such_tool" || env.Error.InstanceID != "alice" {
		t.Errorf("unknown tool over MCP: %s; through the registry (git codex call): %s", got, want)
	}
}

// TestMCPConcurrentSessions runs four agents' servers at once, each with its
// own store on the same repository (as four `git codex mcp` processes
// would), each sending mail as fast as it can: every call must land as its
// own commit.
func TestMCPConcurrentSessions(t *testing.T) {
	dir := mcpRepo(t)
	const agents, perAgent = 4, 15
	reg := builtin.Registry()
	st := mcpStore(t, dir)
	for i := range agents {
		args := fmt.Sprintf(`{"id":"w%d","type":"worker"}`, i)
		if r := reg.CallAs(context.Background(), st, tools.Origin{ID: mcpHuman}, "agent_register", json.RawMessage(args)); !r.OK {
			t.Fatal(r.Error)
		}
	}
	before := commitCount(t, dir)
	sessions := make([]*mcp.ClientSession, agents)
	for i := range sessions {
		sessions[i], _ = mcpConnect(t, dir, fmt.Sprintf("w%d", i))
	}
	ids := make([][]string, agents)
	errs := make(chan error, agents*perAgent)
	var wg sync.WaitGroup
	for i, cs := range sessions {
		wg.Go(func() {
			for j := range perAgent {
				args := fmt.Sprintf(`{"to":"boss","subject":"w%d #%d","body":"report"}`, i, j)
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mail_send", Arguments: json.RawMessage(args)})
				if err != nil {
					errs <- err
					continue
				}
				if res.IsError {
					b, _ := json.Marshal(res.StructuredContent)
					errs <- fmt.Errorf("w%d: %s", i, b)
					continue
				}
				var env struct {
					Data mail.MailSent `json:"data"`
				}
				b, _ := json.Marshal(res.StructuredContent)
				if err := json.Unmarshal(b, &env); err != nil {
					errs <- err
					continue
				}
				ids[i] = append(ids[i], env.Data.MailID)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := commitCount(t, dir) - before; got != agents*perAgent {
		t.Errorf("%d calls made %d commits", agents*perAgent, got)
	}
	tree := gitstatetest.Git(t, dir, "ls-tree", "-r", "--name-only", gitstate.RefState, "mail/boss")
	for i := range ids {
		if len(ids[i]) != perAgent {
			t.Errorf("w%d: %d mails sent, want %d", i, len(ids[i]), perAgent)
		}
		for _, id := range ids[i] {
			if !strings.Contains(tree, "/"+id+".json") {
				t.Errorf("mail %s from w%d is not in the state", id, i)
			}
		}
	}
	if n := strings.Count(tree, "\n") + 1; n != agents*perAgent {
		t.Errorf("boss has %d mails, want %d", n, agents*perAgent)
	}
	// every commit is the parent of the next: no update was lost or forked
	if got := gitstatetest.Git(t, dir, "rev-list", "--count", "--merges", gitstate.RefState); got != "0" {
		t.Errorf("%s merges in the state history", got)
	}
}

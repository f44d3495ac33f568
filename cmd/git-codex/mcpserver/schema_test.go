package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/github/githubtest"
	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/gitcodex/git-codex/tools/delegate"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPResultsMatchOutputSchemas calls every tool as tools/list shows it
// to the go-sdk client, successes and refusals, and holds each result's
// structuredContent against the tool's published outputSchema with a
// strict validator (draft 2020-12, unknown properties refused). It also
// checks the readOnly hint: such a call leaves the state's tree as it was.
func TestMCPResultsMatchOutputSchemas(t *testing.T) {
	dir := mcpRepo(t)
	writeConflict(t, dir)
	privateTmux(t)
	gitstatetest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "base") // spawn forks HEAD
	gh := githubtest.New()                                                  // create_pull_request and create_issues go here
	t.Cleanup(gh.Close)
	for k, v := range map[string]string{"CODEX_GITHUB_API_URL": gh.URL, "GH_REPO": "o/r", "GH_TOKEN": "t", "GH_CONFIG_DIR": t.TempDir(), "GH_PATH": "/nonexistent"} {
		t.Setenv(k, v)
	}
	cs, _ := mcpConnect(t, dir, mcpHuman)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Resolved{}
	hints := map[string]*mcp.ToolAnnotations{}
	for _, tool := range res.Tools {
		var s jsonschema.Schema
		remarshal(t, tool.OutputSchema, &s)
		r, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: output schema does not resolve: %v", tool.Name, err)
		}
		schemas[tool.Name], hints[tool.Name] = r, tool.Annotations
	}

	vars := map[string]string{}
	expand := func(s string) string {
		for k, v := range vars {
			s = strings.ReplaceAll(s, "$"+k, v)
		}
		return s
	}
	calls := []struct {
		tool, args string
		ok         bool
		set        string // VAR=json.path of data to remember
	}{
		{"agent_register", `{"id":"carol","type":"coding","supervisor":"boss"}`, true, ""},
		{"agent_register", `{"id":"carol","type":"coding"}`, false, ""},
		{"agent_get_status", `{}`, true, ""},
		{"agent_list", `{}`, true, ""},
		{"agent_show", `{"id":"alice"}`, true, ""},
		{"agent_show", `{"id":"nobody"}`, false, ""},
		{"config_get", `{}`, true, ""},
		{"config_set", `{"key":"mail.max_subject_bytes","value":"600"}`, true, ""},
		{"config_set", `{"key":"policy.review.deny","value":"supervisor.*,orchestrator.*"}`, true, ""},
		{"config_get", `{"key":"policy.review.deny"}`, true, ""},
		{"config_list", `{}`, true, ""},
		{"config_unset", `{"key":"mail.max_subject_bytes"}`, true, ""},
		{"config_unset", `{"key":"mail.max_subject_bytes"}`, true, ""},
		{"config_reset", `{"what":"policy.review.deny"}`, true, ""},
		{"config_set", `{"key":"no.such.key","value":"1"}`, false, ""},
		{"conflict_list", `{}`, true, ""},
		{"lock_acquire", `{"name":"db","reason":"migrating","ttl_seconds":60}`, true, ""},
		{"lock_list", `{}`, true, ""},
		{"lock_release", `{"name":"db"}`, true, ""},
		{"lock_release", `{"name":"db"}`, false, ""},
		{"log_decision", `{"title":"Use SQLite","body":"small"}`, true, "DECISION=log_id"},
		{"decision_list", `{"limit":5}`, true, ""},
		{"decision_show", `{"id":"$DECISION"}`, true, ""},
		{"decision_show", `{"id":"d-0000000000000000"}`, false, ""},
		{"mail_send", `{"to_human":true,"subject":"note","body":"to us"}`, true, "MAIL=mail_id"},
		{"mail_send", `{"to":"alice","subject":"s","body":"b","cc":"x"}`, false, ""},
		{"mail_list_inbox", `{"include_read":true}`, true, ""},
		{"mail_read", `{"mail_id":"$MAIL"}`, true, ""},
		{"mail_reply", `{"original_mail_id":"$MAIL","body":"noted"}`, true, ""},
		{"mail_read", `{"mail_id":"m-0000000000000000"}`, false, ""},
		{"task_create", `{"title":"Parser","description":"write it"}`, true, "TASK=id"},
		{"task_list", `{}`, true, ""},
		{"task_show", `{"id":"$TASK"}`, true, ""},
		{"task_claim", `{"id":"$TASK"}`, true, ""},
		{"task_update_status", `{"id":"$TASK","state":"REVIEW"}`, true, ""},
		{"task_release", `{"id":"$TASK"}`, true, ""},
		{"task_assign", `{"id":"$TASK","agent":"alice"}`, true, ""},
		{"task_show", `{"id":"t-0000000000000000"}`, false, ""},
		{"config_set", `{"key":"agent.cat.command","value":"sh -c 'exec cat'"}`, true, ""},
		{"spawn", `{"type":"coding","prompt":"p","agent":"cat","name":"inst1"}`, true, ""},
		{"spawn", `{"type":"coding","prompt":"p","agent":"cat","name":"inst1"}`, false, ""},
		{"instance_list", `{}`, true, ""},
		{"instance_peek", `{"id":"inst1"}`, true, ""},
		{"instance_send", `{"id":"inst1","text":"hello"}`, true, ""},
		{"instance_kill", `{"id":"inst1"}`, true, ""},
		{"instance_kill", `{"id":"inst1"}`, false, ""},
		{"spawn", `{"type":"review","prompt":"p","agent":"cat","name":"inst2"}`, true, ""},
		{"instance_abandon", `{"id":"inst2"}`, true, ""},
		{"instance_reap", `{"dry_run":true}`, true, ""},
		{"instance_cleanup", `{}`, true, ""},
		{"prompt_search", `{"query":"review a coder's changes"}`, true, ""},
		{"prompt_search", `{"query":" "}`, false, ""},
		{"prompt_describe", `{"c1":"codex","c2":"review","c3":"changes"}`, true, ""},
		{"prompt_describe", `{"c1":"codex","c2":"no","c3":"such"}`, false, ""},
		{"prompt_execute", `{"c1":"codex","c2":"work","c3":"task","task":"$TASK","options":{"input_text":"go"}}`, true, ""},
		{"prompt_execute", `{"c1":"codex","c2":"work","c3":"task","options":{"uv-nope":"x"}}`, false, ""},
		{"prompt_reload", `{}`, true, ""},
		{"prompt_reload", `{"agent":"nobody"}`, false, ""},
		{"no_such_tool", `{}`, false, ""},
	}
	called := map[string]bool{}
	check := func(cs *mcp.ClientSession, tool, rawArgs string, wantOK bool, set string) {
		t.Helper()
		args := expand(rawArgs)
		tree := stateTree(t, dir)
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("%s %s: %v", tool, args, err)
		}
		var sc any
		remarshal(t, r.StructuredContent, &sc)
		env, _ := sc.(map[string]any)
		if ok, _ := env["ok"].(bool); ok != wantOK || r.IsError == wantOK {
			t.Fatalf("%s %s: ok=%v isError=%v, want ok=%v: %v", tool, args, env["ok"], r.IsError, wantOK, sc)
		}
		schema := schemas[tool]
		if schema == nil {
			// not listed: any tool's envelope describes a refusal
			schema = schemas["mail_send"]
		}
		if err := schema.Validate(sc); err != nil {
			t.Errorf("%s %s: structuredContent does not match the output schema: %v\n%v", tool, args, err, sc)
		}
		if wantOK {
			called[tool] = true
			if h := hints[tool]; h.ReadOnlyHint && stateTree(t, dir) != tree {
				t.Errorf("%s is marked readOnly but changed the state's tree", tool)
			}
		}
		if name, path, ok := strings.Cut(set, "="); ok {
			vars[name] = env["data"].(map[string]any)[path].(string)
		}
	}
	for _, c := range calls {
		check(cs, c.tool, c.args, c.ok, c.set)
	}
	// the review loop, as the coding instance and its reviewer
	check(cs, "spawn", `{"type":"coding","prompt":"p","agent":"cat","name":"coder9"}`, true, "WT=worktree_path")
	gitstatetest.Git(t, vars["WT"], "commit", "-q", "--allow-empty", "-m", "work")
	coder, _ := mcpConnect(t, dir, "coder9")
	check(coder, "request_review", `{"completion_message":"done"}`, true, "REV=review_instance_id")
	check(coder, "request_review", `{}`, false, "")
	reviewer, _ := mcpConnect(t, dir, vars["REV"])
	check(reviewer, "send_feedback", `{"feedback":"fine","feedback_type":"approved"}`, true, "")
	check(reviewer, "send_feedback", `{"feedback":"fine","feedback_type":"approved"}`, false, "")
	check(coder, "create_pull_request", `{"title":"t","description":"d"}`, true, "")
	check(coder, "github_retry", `{"list":true}`, true, "")
	check(coder, "github_reviews", `{}`, true, "")
	check(cs, "create_issues", `{"issues":[{"title":"a","body":"b","labels":["x"]}]}`, true, "")
	check(coder, "agent_set_status", `{"status":"COMPLETED","reason":"approved"}`, true, "")
	check(coder, "agent_set_status", `{"status":"ACTIVE"}`, false, "")
	// an epic and its review queue, with GitHub in memory
	forge := &testForge{}
	boss := mcpConnectForge(t, dir, "boss", forge)
	commitFile(t, dir, "README.md", "# widgets\n") // on the epic's branch, for epic_read_file
	alice, _ := mcpConnect(t, dir, "alice")
	check(boss, "epic_create", `{"title":"Profiles","description":"end to end"}`, true, "EPIC=epic_id")
	check(boss, "epic_create", `{"title":"Profiles","description":"end to end","branch":"-x"}`, false, "")
	check(boss, "task_create", `{"title":"Page","description":"the page","epic_id":"$EPIC"}`, true, "ET=id")
	check(boss, "epic_list_tasks", `{}`, true, "")
	check(boss, "agent_get_epic", `{}`, true, "")
	check(alice, "task_claim", `{"id":"$ET"}`, true, "")
	check(alice, "agent_get_task", `{}`, true, "")
	check(alice, "task_add_comment", `{"task_id":"$ET","body":"on it"}`, true, "")
	check(boss, "agent_get_task", `{}`, false, "")
	submitPR(t, dir, forge, vars["ET"], "epic/"+vars["EPIC"], "epic/"+vars["EPIC"])
	check(boss, "epic_get_review_queue", `{}`, true, "")
	check(boss, "epic_read_file", `{"task_id":"$ET","file_path":"README.md","source":"branch"}`, true, "")
	check(boss, "epic_read_file", `{"task_id":"$ET","file_path":"../x","source":"branch"}`, false, "")
	check(boss, "epic_request_changes", `{"task_id":"$ET","feedback":"add tests"}`, true, "")
	check(alice, "task_update_status", `{"id":"$ET","state":"REVIEW"}`, true, "")
	check(boss, "epic_approve_pr", `{"task_id":"$ET"}`, true, "")
	check(boss, "epic_approve_pr", `{"task_id":"$ET"}`, false, "")
	check(boss, "epic_create_epic_pr", `{}`, true, "")
	// a cycle (seed 001), with this machine's role PSKs, and a credential
	cyc, _, srv := mcpConnectWith(t, dir, mcpHuman, nil, nil)
	srv.origin.PSK = func(role string) string { return "psk-" + role }
	pay := func(from, to string) string {
		return `{"cycle_id":"$CID","feature":"f","producer":"` + from + `","consumer":"` + to + `","files_modified":[],"endpoints":[],"data_shapes":[],"assumptions":[],"todos":[],"notes":[]}`
	}
	for _, c := range []struct{ tool, args, set string }{
		{"session_open", `{"role":"gemini","psk":"psk-gemini"}`, "GS=session_token"},
		{"session_open", `{"role":"codex","psk":"psk-codex"}`, "CS=session_token"},
		{"cycle_start", `{"feature":"f"}`, "CID=cycle_id"},
		{"cycle_status", `{}`, ""},
		{"lock_acquire", `{"session_token":"$GS"}`, "GLA=lock_token"},
		{"handoff_write", `{"target":"codex","session_token":"$GS","lock_token":"$GLA","payload":` + pay("gemini", "codex") + `}`, ""},
		{"handoff_read", `{"target":"codex"}`, ""},
		{"lock_acquire", `{"session_token":"$CS"}`, "CLA=lock_token"},
		{"handoff_write", `{"target":"gemini","session_token":"$CS","lock_token":"$CLA","payload":` + pay("codex", "gemini") + `}`, ""},
		{"lock_acquire", `{"session_token":"$GS"}`, "GLB=lock_token"},
		{"cycle_complete", `{"session_token":"$GS","lock_token":"$GLB"}`, ""},
		{"cycle_archive", `{"session_token":"$GS","lock_token":"$GLB"}`, ""},
		{"agent_rotate_token", `{"id":"alice"}`, ""},
	} {
		check(cyc, c.tool, c.args, true, c.set)
	}
	check(cyc, "cycle_archive", `{"session_token":"$GS","lock_token":"$GLB"}`, false, "")
	// delegation (seed 002), to a script that speaks claude -p's
	// stream-json; a prompt with "slow" in it runs until stopped
	fake := filepath.Join(t.TempDir(), "claude")
	script := "#!/bin/sh\np=$(cat)\n" +
		`echo '{"type":"system","subtype":"init","session_id":"c-1"}'` + "\n" +
		`case "$p" in *slow*) sleep 30;; esac` + "\n" +
		`echo '{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":1,"output_tokens":1}},"session_id":"c-1"}'` + "\n" +
		`echo '{"type":"result","subtype":"success","is_error":false,"result":"hi","session_id":"c-1","total_cost_usd":0.001,"num_turns":1}'` + "\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	vars["FAKE"] = fake
	for _, c := range []struct {
		tool, args string
		ok         bool
		set        string
	}{
		{"config_set", `{"key":"agent.claude.command","value":"$FAKE"}`, true, ""},
		{"agent_query", `{"prompt":"hello","model":"haiku"}`, true, "DS=session_id"},
		{"agent_query", `{"prompt":"hello","agent":"nobody"}`, false, ""},
		{"agent_query_stream", `{"prompt":"hello"}`, true, ""},
		{"agent_list_sessions", `{}`, true, ""},
		{"agent_set_model", `{"session_id":"$DS","model":"opus"}`, true, ""},
		{"agent_set_permission_mode", `{"session_id":"$DS","mode":"deny"}`, true, ""},
		{"agent_continue", `{"session_id":"$DS","prompt":"more"}`, true, ""},
		{"agent_resume", `{"session_id":"$DS"}`, true, ""},
		{"agent_interrupt", `{"session_id":"$DS"}`, false, ""},
		{"archive", `{"older_than":"0","dry_run":true}`, true, ""},
		{"archive", `{"older_than":"0","kinds":["mail","conflicts"]}`, true, ""},
		{"archive", `{"older_than":"last week"}`, false, ""},
		{"archive_restore", `{"record":"c-0123456789abcdef"}`, true, ""},
		{"archive_restore", `{"record":"c-0123456789abcdef"}`, false, ""},
	} {
		check(cs, c.tool, c.args, c.ok, c.set)
	}
	for _, stop := range []string{"agent_interrupt", "agent_abort"} {
		runner, _ := mcpConnect(t, dir, mcpHuman)
		done := make(chan *mcp.CallToolResult, 1)
		go func() {
			r, _ := runner.CallTool(context.Background(), &mcp.CallToolParams{Name: "agent_query", Arguments: json.RawMessage(`{"prompt":"slow"}`)})
			done <- r
		}()
		var id string
		for deadline := time.Now().Add(20 * time.Second); id == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "agent_list_sessions", Arguments: json.RawMessage(`{"status":"RUNNING"}`)})
			if err != nil {
				t.Fatal(err)
			}
			var env struct {
				Data delegate.DelegationList `json:"data"`
			}
			remarshal(t, r.StructuredContent, &env)
			if len(env.Data.Sessions) == 1 {
				id = env.Data.Sessions[0].SessionID
			}
		}
		if id == "" {
			t.Fatalf("%s: the slow query was never listed RUNNING", stop)
		}
		check(cs, stop, `{"session_id":"`+id+`"}`, true, "")
		r := <-done
		var sc any
		remarshal(t, r.StructuredContent, &sc)
		if err := schemas["agent_query"].Validate(sc); err != nil {
			t.Errorf("the stopped agent_query's result does not match its output schema: %v\n%v", err, sc)
		}
	}
	for name := range schemas {
		if !called[name] {
			t.Errorf("%s: no successful call checked against its output schema; add one", name)
		}
	}
}

// stateTree is the tree of the state's tip.
func stateTree(t *testing.T, dir string) string {
	t.Helper()
	return gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState+"^{tree}")
}

// writeConflict stores a conflict record as sync would, so conflict_list
// has one to show (its lost_version is a record kept as raw JSON).
func writeConflict(t *testing.T, dir string) {
	t.Helper()
	st := mcpStore(t, dir)
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	k := tools.Conflict{
		ID: "c-0123456789abcdef", Kind: "lock", Resource: "db", Record: "locks/db.json", Rule: "earlier-claim",
		Winner:      &tools.Claim{Holder: "alice", Clock: 3, At: at},
		Loser:       tools.Claim{Holder: "boss", Clock: 4, At: at.Add(time.Second)},
		LostVersion: json.RawMessage(`{"name":"db","claim":{"holder":"boss","clock":4}}`),
		MailID:      "m-0123456789abcdef", CreatedAt: at, Clock: 5,
	}
	_, err := st.Update(context.Background(), func(tx *gitstate.Tx) error {
		tx.SetMeta(gitstate.Meta{Summary: "test: a conflict as sync records it"})
		return tx.Put("conflicts/"+gitstate.Fanout(k.ID)+"/"+k.ID+".json", k)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMCPToolAnnotations checks the hints tools/list derives from each
// tool's definition.
func TestMCPToolAnnotations(t *testing.T) {
	dir := mcpRepo(t)
	cs, _ := mcpConnect(t, dir, mcpHuman)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	type hints struct{ readOnly, destructive, idempotent bool }
	want := map[string]hints{
		"mail_list_inbox": {true, false, true},
		"agent_list":      {true, false, true},
		"mail_send":       {false, false, false},
		"mail_read":       {false, true, true},
		"config_set":      {false, true, true},
		"task_assign":     {false, true, false},
	}
	for _, tool := range res.Tools {
		a := tool.Annotations
		if a == nil || a.DestructiveHint == nil {
			t.Errorf("%s: annotations %+v, want all three hints", tool.Name, a)
			continue
		}
		rt, _ := builtin.Registry().Lookup(tool.Name)
		got := hints{a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint}
		if got != (hints{rt.Hints.ReadOnly, !rt.Hints.ReadOnly && !rt.Hints.Additive, rt.Hints.Idempotent}) {
			t.Errorf("%s: annotations %+v do not follow its hints %+v", tool.Name, got, rt.Hints)
		}
		if w, ok := want[tool.Name]; ok && got != w {
			t.Errorf("%s: annotations %+v, want %+v", tool.Name, got, w)
		}
	}
}

// TestMCPSchemasPortable holds every tool's published input and output
// schema to the rules of the MCP Inspector's --strict portability check
// (inspector 2.12.0, core/json/schemaLint.ts), which strict clients and
// the TypeScript SDK's validators share: no type array (["null","object"]
// is legal JSON Schema, but one-type dialects reject it), no schema that
// constrains nothing ({}), no bare boolean where a schema is expected, no
// $ref out of the document. mcp_inspector.txtar runs the inspector itself.
func TestMCPSchemasPortable(t *testing.T) {
	dir := mcpRepo(t)
	cs, _ := mcpConnect(t, dir, mcpHuman) // a person: every tool
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tool := range res.Tools {
		for kind, schema := range map[string]any{"inputSchema": tool.InputSchema, "outputSchema": tool.OutputSchema} {
			var s any
			remarshal(t, schema, &s)
			for _, f := range schemaLint(s, kind, "") {
				t.Errorf("%s: %s", tool.Name, f)
				n++
			}
		}
	}
	if n > 0 {
		t.Logf("%d portability findings", n)
	}
}

// schemaLint lists what the inspector's --strict check finds in schema s
// (a decoded JSON value) at path; keyword is the one it sits under.
func schemaLint(s any, path, keyword string) []string {
	constraining := map[string]bool{}
	for _, k := range strings.Fields(`type enum const multipleOf maximum exclusiveMaximum minimum exclusiveMinimum
		maxLength minLength pattern format contentMediaType contentEncoding contentSchema maxItems minItems uniqueItems
		maxContains minContains maxProperties minProperties required dependentRequired allOf anyOf oneOf not items
		prefixItems contains additionalItems unevaluatedItems properties patternProperties additionalProperties
		unevaluatedProperties propertyNames dependentSchemas dependencies $ref $dynamicRef $recursiveRef`) {
		constraining[k] = true
	}
	boolOK := map[string]bool{"additionalProperties": true, "unevaluatedProperties": true, "additionalItems": true, "unevaluatedItems": true}
	var out []string
	var walk func(s any, path, keyword string)
	walk = func(s any, path, keyword string) {
		if b, ok := s.(bool); ok {
			if !boolOK[keyword] {
				out = append(out, fmt.Sprintf("%s: bare %v where a schema is expected", path, b))
			}
			return
		}
		m, ok := s.(map[string]any)
		if !ok {
			return
		}
		if ts, ok := m["type"].([]any); ok {
			out = append(out, fmt.Sprintf("%s: type is an array %v", path, ts))
		}
		if ref, ok := m["$ref"].(string); ok && ref != "" && !strings.HasPrefix(ref, "#") {
			out = append(out, fmt.Sprintf("%s: $ref %s leaves the document", path, ref))
		}
		constrains := false
		for k := range m {
			constrains = constrains || constraining[k]
		}
		_, hasIf := m["if"]
		_, hasThen := m["then"]
		_, hasElse := m["else"]
		if !constrains && !(hasIf && (hasThen || hasElse)) && keyword != "not" {
			out = append(out, fmt.Sprintf("%s: constrains nothing (accepts any value)", path))
		}
		for _, k := range []string{"properties", "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions"} {
			if sub, ok := m[k].(map[string]any); ok {
				for name, v := range sub {
					walk(v, path+"."+k+"."+name, k)
				}
			}
		}
		for _, k := range []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"} {
			if sub, ok := m[k].([]any); ok {
				for i, v := range sub {
					walk(v, fmt.Sprintf("%s.%s[%d]", path, k, i), k)
				}
			}
		}
		for _, k := range []string{"items", "contains", "not", "propertyNames", "if", "then", "else", "additionalProperties",
			"unevaluatedProperties", "additionalItems", "unevaluatedItems", "contentSchema"} {
			if v, ok := m[k]; ok {
				if _, isList := v.([]any); !isList {
					walk(v, path+"."+k, k)
				}
			}
		}
	}
	walk(s, path, keyword)
	return out
}

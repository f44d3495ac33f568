package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolListBudget is, per agent type, the most tokens tools/list may cost
// an agent's model in every turn (issue 25, item 16): what reaches the
// model is each tool's name, description and input schema, as sent.
// Tokens are estimated as bytes/4, the figure the issue measured with
// (compact JSON and English text run 3.5–4.5 bytes a token with current
// tokenizers).
var toolListBudget = map[tools.AgentType]int{
	tools.TypeWorker: 3000, tools.TypeCoding: 3000, tools.TypeReview: 3000,
	tools.TypePlanning: 6000, tools.TypeOrchestrator: 6000, tools.TypeSupervisor: 6000,
}

// toolListCost is what a tools/list answer costs: the bytes that reach
// the model (name, description, input schema) and the bytes on the wire.
func toolListCost(t *testing.T, ts []*mcp.Tool) (model, wire int) {
	t.Helper()
	for _, tool := range ts {
		in, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		all, err := json.Marshal(tool)
		if err != nil {
			t.Fatal(err)
		}
		model += len(tool.Name) + len(tool.Description) + len(in)
		wire += len(all)
	}
	return model, wire
}

// TestMCPToolListEconomy measures tools/list per agent type against
// toolListBudget (docs/PERFORMANCE.md records the figures), and checks
// that no tool is lost: every tool the type's policy permits is listed,
// or named in tool_call's description, shown with its schema by tool_find
// and callable through tool_call, recorded as the tool itself.
func TestMCPToolListEconomy(t *testing.T) {
	dir := mcpRepo(t)
	reg := builtin.Registry()
	st := mcpStore(t, dir)
	for _, typ := range []tools.AgentType{tools.TypeWorker, tools.TypeCoding, tools.TypeReview, tools.TypePlanning, tools.TypeOrchestrator, tools.TypeSupervisor} {
		id := "eco-" + string(typ)
		if r := reg.CallAs(context.Background(), st, tools.Origin{ID: mcpHuman}, "agent_register", json.RawMessage(fmt.Sprintf(`{"id":%q,"type":%q}`, id, typ))); !r.OK {
			t.Fatalf("agent_register %s: %+v", id, r.Error)
		}
		cs, _ := mcpConnect(t, dir, id)
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		model, wire := toolListCost(t, res.Tools)
		var permitted []*tools.Tool
		if err := st.View(context.Background(), func(sn *gitstate.Snapshot) error {
			permitted, err = reg.Permitted(sn, id)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		nameBytes := 0
		for _, tool := range res.Tools {
			nameBytes += len(tool.Name)
		}
		t.Logf("%-12s %2d of %2d tools listed, %5d bytes to the model (~%d tokens; names alone %d bytes), %6d on the wire", typ, len(res.Tools), len(permitted), model, model/4, nameBytes, wire)
		if model/4 > toolListBudget[typ] {
			t.Errorf("%s: tools/list costs the model ~%d tokens a turn (%d bytes), over the budget of %d", typ, model/4, model, toolListBudget[typ])
		}
		names := toolNames(res.Tools)
		var callDesc string
		for _, tool := range res.Tools {
			if tool.Name == "tool_call" {
				callDesc = tool.Description
			}
		}
		env := mcpCall(t, cs, "tool_find", `{}`)
		var found struct {
			Tools []struct {
				Name        string         `json:"name"`
				InputSchema map[string]any `json:"input_schema"`
			} `json:"tools"`
		}
		if env.OK {
			remarshal(t, env.Data, &found)
		}
		shown := map[string]bool{}
		for _, f := range found.Tools {
			shown[f.Name] = f.InputSchema["type"] == "object"
		}
		deferred := ""
		for _, p := range permitted {
			if slices.Contains(names, p.Name) {
				continue
			}
			deferred = p.Name
			if !strings.Contains(callDesc, p.Name) || !shown[p.Name] {
				t.Errorf("%s: %s is permitted but neither listed nor named by tool_call and shown by tool_find (%q)", typ, p.Name, callDesc)
			}
		}
		if deferred == "" {
			continue
		}
		// a deferred tool is called through tool_call, refused or not, and
		// recorded under its own name
		mcpCall(t, cs, "tool_call", fmt.Sprintf(`{"name":%q,"arguments":{}}`, deferred))
		if got := lastTrailers(t, dir); !strings.HasPrefix(got, deferred+"/"+id+"/") {
			t.Errorf("%s: tool_call of %s recorded as %q", typ, deferred, got)
		}
	}
}

// TestMCPToolsFindableByKeyword checks that an agent finds a tool by the
// words it would search for, in the tool's name and the first words of
// its description: Claude Code defers MCP tools behind a keyword search
// of names and descriptions, and a model skimming a long list reads no
// further. For a worker, the deferred tools are found through
// tool_call's description, which names them.
func TestMCPToolsFindableByKeyword(t *testing.T) {
	dir := mcpRepo(t)
	cs, _ := mcpConnect(t, dir, mcpHuman)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	head := map[string]string{}
	for _, tool := range res.Tools {
		words := strings.Fields(tool.Description)
		head[tool.Name] = strings.ToLower(strings.ReplaceAll(tool.Name, "_", " ") + " " + strings.Join(words[:min(len(words), 12)], " "))
	}
	for query, want := range map[string]string{
		"send mail": "mail_send", "inbox": "mail_list_inbox", "reply": "mail_reply",
		"claim task": "task_claim", "task status": "task_update_status", "comment": "task_add_comment",
		"lock": "lock_acquire", "pull request": "create_pull_request", "review": "request_review",
		"feedback": "send_feedback", "decision": "log_decision", "delegate": "agent_query",
		"handoff": "handoff_write", "cycle": "cycle_start", "spawn agent": "spawn", "epic": "epic_create",
		"approve": "epic_approve_pr", "issues": "create_issues", "prompt": "prompt_search", "setting": "config_set",
		"instance": "instance_list", "credential": "agent_rotate_token", "conflict": "conflict_list",
	} {
		text, ok := head[want]
		if !ok {
			t.Errorf("%s is not a tool", want)
			continue
		}
		for _, w := range strings.Fields(query) {
			if !strings.Contains(text, w) {
				t.Errorf("%q does not find %s: %q is not in its name or first words (%q)", query, want, w, text)
			}
		}
	}
}

// TestMCPToolCallAndFind: tool_find searches the deferred tools by words
// of their names and descriptions; tool_call runs any tool as the
// registry does, refusals included (recorded under the tool's own name),
// and refuses input that names no tool. Results match the published
// output schemas.
func TestMCPToolCallAndFind(t *testing.T) {
	dir := mcpRepo(t)
	cs, _ := mcpConnect(t, dir, "alice") // a worker
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Resolved{}
	for _, tool := range res.Tools {
		var s jsonschema.Schema
		remarshal(t, tool.OutputSchema, &s)
		r, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		schemas[tool.Name] = r
	}
	call := func(tool, args string) envelope {
		t.Helper()
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatal(err)
		}
		var sc any
		remarshal(t, r.StructuredContent, &sc)
		if err := schemas[tool].Validate(sc); err != nil {
			t.Errorf("%s %s: result does not match the output schema: %v", tool, args, err)
		}
		var env envelope
		remarshal(t, r.StructuredContent, &env)
		if env.OK == r.IsError {
			t.Errorf("%s %s: isError %v with ok %v", tool, args, r.IsError, env.OK)
		}
		return env
	}
	before := commitCount(t, dir)
	env := call("tool_find", `{"query":"handoff"}`)
	var found struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	remarshal(t, env.Data, &found)
	var names []string
	for _, f := range found.Tools {
		names = append(names, f.Name)
	}
	if !env.OK || !slices.Contains(names, "handoff_write") || slices.Contains(names, "mail_send") || slices.Contains(names, "agent_query") {
		t.Errorf("tool_find handoff: %v %+v", names, env.Error)
	}
	if commitCount(t, dir) != before {
		t.Error("tool_find wrote a commit; it lists, as tools/list does")
	}
	if env := call("tool_call", `{"name":"conflict_list","arguments":{}}`); !env.OK {
		t.Errorf("tool_call conflict_list: %+v", env.Error)
	}
	if got := lastTrailers(t, dir); got != "conflict_list/alice/ok" {
		t.Errorf("tool_call conflict_list recorded as %q", got)
	}
	// the policy decides, listed or not
	if env := call("tool_call", `{"name":"agent_list"}`); env.OK || env.Error.Code != tools.PermissionDenied {
		t.Errorf("tool_call agent_list as a worker: %+v", env)
	}
	if got := lastTrailers(t, dir); got != "agent_list/alice/PERMISSION_DENIED" {
		t.Errorf("refused tool_call recorded as %q", got)
	}
	for _, bad := range []string{`{}`, `{"name":"tool_call"}`, `{"name":"mail_send","args":{}}`} {
		if env := call("tool_call", bad); env.OK || env.Error.Code != tools.InvalidInput {
			t.Errorf("tool_call %s: %+v, want INVALID_INPUT", bad, env)
		}
	}
	if env := call("tool_find", `{"q":"x"}`); env.OK || env.Error.Code != tools.InvalidInput {
		t.Errorf("tool_find with an unknown field: %+v, want INVALID_INPUT", env)
	}
}

// TestMCPToolCallFollowsPolicy: tool_call's description names the deferred
// tools the policy in force permits, and changes (list_changed) with it.
func TestMCPToolCallFollowsPolicy(t *testing.T) {
	dir := mcpRepo(t)
	cs, s, changed := listChanges(t, dir, "alice")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.watch(ctx, 20*time.Millisecond)
	desc := func() string {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range res.Tools {
			if tool.Name == "tool_call" {
				return tool.Description
			}
		}
		return ""
	}
	if d := desc(); !strings.Contains(d, "cycle_start") {
		t.Fatalf("tool_call's description %q does not name cycle_start", d)
	}
	setPolicy(t, dir, "policy.worker.deny", "supervisor.*,orchestrator.*,epic.*,task.create,task.assign,cycle.*")
	waitChange(t, changed, "a person denied workers cycle.*")
	var d string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if d = desc(); !strings.Contains(d, "cycle_") {
			break
		}
	}
	if strings.Contains(d, "cycle_") || !strings.Contains(d, "handoff_write") {
		t.Errorf("after workers were denied cycle.*, tool_call's description is %q", d)
	}
}

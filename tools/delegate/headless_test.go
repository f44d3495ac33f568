package delegate

import (
	"errors"
	"reflect"
	"testing"

	"github.com/gitcodex/git-codex/tools"
)

// TestHeadlessArgs holds each agent CLI's arguments for a turn to the
// table in docs/DELEGATION.md, and the options a CLI cannot honour to
// INVALID_INPUT naming the option and the agent.
func TestHeadlessArgs(t *testing.T) {
	c := headlessContracts()
	mcp := []MCPServerSpec{{Name: "issues", Command: "issues-mcp", Args: []string{"--db", "x"}}}
	cases := []struct {
		agent string
		spec  turnSpec
		want  []string
		err   string // the refused option
	}{
		{"claude", turnSpec{Model: "haiku", PermissionMode: "auto", MaxTurns: 30},
			[]string{"-p", "--output-format", "stream-json", "--verbose", "--model", "haiku", "--max-turns", "30", "--permission-mode", "default"}, ""},
		{"claude", turnSpec{PermissionMode: "allow", MaxTurns: 5, Resume: "c-1", MCPConfig: "/m.json"},
			[]string{"-p", "--output-format", "stream-json", "--verbose", "--resume", "c-1", "--max-turns", "5", "--permission-mode", "bypassPermissions", "--mcp-config", "/m.json"}, ""},
		{"claude", turnSpec{PermissionMode: "deny", MaxTurns: 30},
			[]string{"-p", "--output-format", "stream-json", "--verbose", "--max-turns", "30", "--permission-mode", "dontAsk"}, ""},
		{"codex", turnSpec{Model: "gpt-5-codex", PermissionMode: "auto", MaxTurns: 30},
			[]string{"exec", "--json", "--skip-git-repo-check", "--model", "gpt-5-codex", "--sandbox", "workspace-write"}, ""},
		{"codex", turnSpec{PermissionMode: "deny", MaxTurns: 30, Resume: "th-1", MCPServers: mcp},
			[]string{"exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only", "-c", `mcp_servers.issues.command="issues-mcp"`, "-c", `mcp_servers.issues.args=["--db","x"]`, "resume", "th-1"}, ""},
		{"codex", turnSpec{PermissionMode: "allow", MaxTurns: 5, MaxTurnsSet: true}, nil, "max_turns"},
		{"gemini", turnSpec{Model: "flash", PermissionMode: "allow", MaxTurns: 30, Resume: "g-1"},
			[]string{"--skip-trust", "--prompt=", "--output-format", "stream-json", "--model", "flash", "--approval-mode", "yolo", "--resume", "g-1"}, ""},
		{"gemini", turnSpec{PermissionMode: "deny", MaxTurns: 30},
			[]string{"--skip-trust", "--prompt=", "--output-format", "stream-json", "--approval-mode", "plan"}, ""},
		{"gemini", turnSpec{PermissionMode: "auto", MaxTurns: 3, MaxTurnsSet: true}, nil, "max_turns"},
		{"gemini", turnSpec{PermissionMode: "auto", MaxTurns: 30, MCPServers: mcp}, nil, "mcp_servers"},
	}
	for _, tc := range cases {
		got, err := c[tc.agent].args(tc.spec)
		if tc.err != "" {
			var e *tools.Error
			if !errors.As(err, &e) || e.Code != tools.InvalidInput || e.Details["option"] != tc.err || e.Details["agent"] != tc.agent {
				t.Errorf("%s %+v: err = %v, want INVALID_INPUT naming %s and %s", tc.agent, tc.spec, err, tc.err, tc.agent)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %+v:\n got %q, %v\nwant %q", tc.agent, tc.spec, got, err, tc.want)
		}
	}
}

// TestHeadlessParse reads each CLI's documented output lines.
func TestHeadlessParse(t *testing.T) {
	c := headlessContracts()
	cases := []struct {
		agent, line string
		want        agentEvent
	}{
		{"claude", `{"type":"system","subtype":"init","session_id":"s1","model":"m"}`, agentEvent{Kind: "init", SessionID: "s1"}},
		{"claude", `{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":3,"output_tokens":4}},"session_id":"s1"}`, agentEvent{Kind: "assistant", Text: "hi", Usage: &tokenUsage{Input: 3, Output: 4}, SessionID: "s1"}},
		{"claude", `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"out"}]},"session_id":"s1"}`, agentEvent{Kind: "tool_result", Text: "out", SessionID: "s1"}},
		{"claude", `{"type":"result","subtype":"error_max_turns","is_error":true,"session_id":"s1","total_cost_usd":0.5,"num_turns":3}`, agentEvent{Kind: "result", SessionID: "s1", CostUSD: 0.5, NumTurns: 3, IsError: true, Subtype: "error_max_turns"}},
		{"claude", `{"type":"result","subtype":"error_during_execution","is_error":true,"session_id":"s1","errors":["a","b"],"usage":{"input_tokens":1,"cache_read_input_tokens":2,"cache_creation_input_tokens":3,"output_tokens":4}}`,
			agentEvent{Kind: "result", SessionID: "s1", IsError: true, Subtype: "error_during_execution", Text: "a; b", Usage: &tokenUsage{Input: 1, CacheRead: 2, CacheWrite: 3, Output: 4}, UsageTotal: true}},
		{"codex", `{"type":"thread.started","thread_id":"th"}`, agentEvent{Kind: "init", SessionID: "th"}},
		{"codex", `{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"done"}}`, agentEvent{Kind: "assistant", Text: "done"}},
		{"codex", `{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":5}}`, agentEvent{Kind: "result", Usage: &tokenUsage{Input: 10, Output: 5}, UsageTotal: true, NumTurns: 1}},
		{"codex", `{"type":"turn.failed","error":{"message":"quota"}}`, agentEvent{Kind: "result", IsError: true, Text: "quota"}},
		{"gemini", `{"type":"init","session_id":"g","model":"m"}`, agentEvent{Kind: "init", SessionID: "g"}},
		{"gemini", `{"type":"message","role":"assistant","content":"par","delta":true}`, agentEvent{Kind: "assistant", Text: "par", Delta: true}},
		{"gemini", `{"type":"result","status":"success","stats":{"total_tokens":42}}`, agentEvent{Kind: "result", Usage: &tokenUsage{Output: 42}, UsageTotal: true, NumTurns: 1}},
	}
	for _, tc := range cases {
		var ev agentEvent
		if err := c[tc.agent].parse([]byte(tc.line), &ev); err != nil || !reflect.DeepEqual(ev, tc.want) {
			t.Errorf("%s %s:\n got %+v, %v\nwant %+v", tc.agent, tc.line, ev, err, tc.want)
		}
	}
	for agent, h := range c {
		var ev agentEvent
		if err := h.parse([]byte("Welcome!"), &ev); err == nil {
			t.Errorf("%s: a line that is not JSON parsed", agent)
		}
	}
}

package delegate

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/tools/instance"
)

// replay reads a recorded stream (testdata/streams, the real CLIs' output
// against tools/modelapi: see streams_record_test.go) as a turn's runner
// does, and returns the outcome, the events, and the index of the first
// event after which the turn would have been stopped at its budget (-1:
// none). exited stands for the process's exit status (nil: 0).
func replay(t *testing.T, file string, d Delegation, exited error) (turnOutcome, []agentEvent, int) {
	t.Helper()
	cli, _, _ := strings.Cut(file, "-")
	b, err := os.ReadFile(filepath.Join("testdata", "streams", file+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	r := turnRun{d: d, l: instance.Launcher{Name: cli}, h: headlessContracts()[cli]}
	var out turnOutcome
	var events []agentEvent
	stopped := -1
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var ev agentEvent
		if err := r.h.parse(line, &ev); err != nil {
			t.Fatalf("%s: a line of the CLI's own output does not parse: %v\n%s", file, err, line)
		}
		events = append(events, ev)
		if r.apply(&out, ev) && stopped < 0 {
			stopped = len(events) - 1
		}
	}
	r.conclude(&out, exited, "")
	return out, events, stopped
}

// TestRecordedStreams reads each CLI's recorded output, errors included,
// and holds the outcome to what the stand-in model was scripted to do
// and what the CLI reported: the answer, the tokens counted as the CLI
// reports them, the reason a turn failed.
func TestRecordedStreams(t *testing.T) {
	exit1 := errors.New("exit status 1")
	cases := []struct {
		file     string
		d        Delegation
		exited   error
		result   string
		tokens   int
		failure  string // a part of it
		reason   string
		over     bool
		agentTok int
	}{
		// claude: one assistant line per content block, each repeating its
		// message's usage (output_tokens 1, cache apart); the result line
		// has the turn's usage summed: 1200+2800+30000+66
		{file: "claude-text", result: "Hello from the stand-in.", tokens: 34066},
		{file: "claude-tool", result: "The notes say: remember the milk.", tokens: 500 + 20000 + 1000 + 40 + 300 + 21000 + 200 + 20},
		{file: "claude-resume", result: "Still: remember the milk.", tokens: 100 + 21500 + 9},
		{file: "claude-mcp", result: "The agent is ACTIVE.", tokens: 800 + 15 + 900 + 6},
		{file: "claude-denied", result: "I was not allowed to run it.", tokens: 220},
		{file: "claude-max-turns", exited: exit1, tokens: 110, reason: ReasonMaxTurns},
		{file: "claude-api-500", exited: exit1, failure: "claude reported an error: API Error: 500 Internal server error"},
		{file: "claude-overloaded-529", exited: exit1, failure: "API Error: 529 Overloaded"},
		{file: "claude-auth-401", exited: exit1, failure: "Invalid API key"},
		// error_* results carry errors[], no result
		{file: "claude-resume-missing", exited: exit1, failure: "claude reported an error: No conversation found with session ID: 11111111-2222-4333-8444-555555555555"},

		// codex: usage at the turn's end only; input_tokens counts the
		// cached ones
		{file: "codex-text", result: "Hello from the stand-in.", tokens: 31200 + 66, agentTok: 31266},
		{file: "codex-command", result: "They say: remember the milk.", tokens: 3100 + 39, agentTok: 3139},
		// a resumed thread's usage is the thread's: less what its first
		// turn reported
		{file: "codex-resume", d: Delegation{AgentTokens: 3139}, result: "Still: remember the milk.", tokens: 300 + 2000 + 7, agentTok: 5446},
		{file: "codex-mcp", result: "The agent is ACTIVE.", tokens: 1700 + 21, agentTok: 1721},
		{file: "codex-mcp-refused", result: "The call was refused.", tokens: 220, agentTok: 220},
		{file: "codex-api-500", exited: exit1, failure: "codex reported an error: We’re currently experiencing high demand"},
		{file: "codex-auth-401", exited: exit1, failure: "unexpected status 401 Unauthorized: Incorrect API key provided"},
		// past its budget: the usage came at the end, the turn ran whole
		{file: "codex-text", d: Delegation{BudgetTokens: 1000}, result: "Hello from the stand-in.", tokens: 31266, over: true, agentTok: 31266},

		// gemini: the stats of the CLI's run (its model router's call
		// included: 15 tokens)
		{file: "gemini-text", result: "Hello from the stand-in.", tokens: 31200 + 66 + 15},
		// the narration before a tool call is not the answer
		{file: "gemini-tool", result: "The notes say: remember the milk.", tokens: 2157},
		{file: "gemini-resume", result: "Still: remember the milk.", tokens: 1300 + 7 + 15},
		{file: "gemini-api-500", exited: exit1, failure: `gemini reported an error: [API Error: {"error":{"code":500,"message":"An internal error has occurred."`, tokens: 15},
		{file: "gemini-overloaded-503", exited: exit1, failure: "[API Error: The model is overloaded. Please try again later.]", tokens: 15},
		{file: "gemini-auth-400", exited: exit1, failure: "API key not valid. Please pass a valid API key.", tokens: 15},
		{file: "gemini-text", d: Delegation{BudgetTokens: 1000}, result: "Hello from the stand-in.", tokens: 31281, over: true},
	}
	for _, tc := range cases {
		if tc.d.BudgetTokens == 0 {
			tc.d.BudgetTokens = defaultBudgetTokens
		}
		out, _, stopped := replay(t, tc.file, tc.d, tc.exited)
		if out.AgentSessionID == "" {
			t.Errorf("%s: no session id", tc.file)
		}
		if tc.result != "" && out.Result != tc.result {
			t.Errorf("%s: result %q, want %q", tc.file, out.Result, tc.result)
		}
		if out.Tokens != tc.tokens {
			t.Errorf("%s: %d tokens, want %d", tc.file, out.Tokens, tc.tokens)
		}
		if out.AgentTokens != tc.agentTok {
			t.Errorf("%s: the agent's own count %d, want %d", tc.file, out.AgentTokens, tc.agentTok)
		}
		if (tc.failure == "") != (out.Failure == "") || !strings.Contains(out.Failure, tc.failure) {
			t.Errorf("%s: failure %q, want one with %q", tc.file, out.Failure, tc.failure)
		}
		if out.Reason != tc.reason || out.OverBudget != tc.over {
			t.Errorf("%s: reason %q, over budget %v; want %q, %v", tc.file, out.Reason, out.OverBudget, tc.reason, tc.over)
		}
		if stopped >= 0 {
			t.Errorf("%s: stopped at its budget after event %d", tc.file, stopped)
		}
	}
}

// Claude's usage comes with each model message, so a turn is stopped as
// soon as its messages' usage passes the budget: in claude-tool, the
// second model call's message (its input re-reads the first's context)
// takes it past 30,000; each of its lines counts once.
func TestRecordedClaudeStopsAtBudget(t *testing.T) {
	out, events, stopped := replay(t, "claude-tool", Delegation{BudgetTokens: 30000}, nil)
	if stopped < 0 {
		t.Fatalf("never stopped at budget 30000: %d tokens", out.Tokens)
	}
	ev := events[stopped]
	if ev.Kind != "assistant" || ev.Text != "The notes say: remember the milk." {
		t.Fatalf("stopped after %+v; want the second model message", ev)
	}
	out, _, stopped = replay(t, "claude-tool", Delegation{BudgetTokens: 43060}, nil)
	if stopped >= 0 || out.OverBudget {
		t.Fatalf("a turn of exactly its budget was stopped (event %d) or reported over", stopped)
	}
}

// What delegate stream shows of each CLI's recorded turns: tool calls
// (codex's MCP calls and commands too), their results, and the CLIs'
// warnings, retries and refusals.
func TestRecordedStreamsProgress(t *testing.T) {
	cases := []struct {
		file string
		want []string
	}{
		{"claude-tool", []string{`"name":"Read","type":"tool_use"`, `"content":"1\tremember the milk`, `"message":"The notes say: remember the milk.","type":"assistant"`}},
		{"claude-mcp", []string{`"name":"mcp__git-codex__agent_get_status","type":"tool_use"`}},
		{"claude-denied", []string{`"kind":"permission_denied","message":"rm in`, `"name":"Bash"`}},
		{"codex-command", []string{`{"input":{"command":"/bin/bash -lc 'cat notes.txt'"},"name":"command","type":"tool_use"}`, `{"content":"remember the milk\n","name":"command","type":"tool_result"}`}},
		{"codex-mcp", []string{`{"input":{},"name":"git-codex/agent_get_status","type":"tool_use"}`, `"content":"error: tool call error: tool call failed for ` + "`git-codex/agent_get_status`"}},
		{"codex-mcp-refused", []string{`"content":"error: MCP tool call requires approval, but approval policy is never"`}},
		{"codex-text", []string{`{"kind":"warning","message":"Model metadata for ` + "`standin-model`" + ` not found.`}},
		{"codex-api-500", []string{`{"message":"We’re currently experiencing high demand, which may cause temporary errors.","type":"error"}`}},
		{"gemini-tool", []string{`"name":"read_file","type":"tool_use"`, `"type":"tool_result"`}},
	}
	for _, tc := range cases {
		_, events, _ := replay(t, tc.file, Delegation{BudgetTokens: defaultBudgetTokens}, nil)
		var msgs []string
		for _, ev := range events {
			if m := progressMessage(ev); m != "" {
				msgs = append(msgs, m)
			}
		}
		all := strings.Join(msgs, "\n")
		for _, w := range tc.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s: no progress message with %s in\n%s", tc.file, w, all)
			}
		}
	}
}

// Gemini CLI's result can say status "error" with no error object: after
// an invalid stream it emits an error event with the message, then the
// result (gemini-cli 0.61's bundle, runNonInteractive: "status:
// invalidStreamError ? 'error' : 'success'"). The reason is the error
// event's.
func TestGeminiErrorWithoutErrorObject(t *testing.T) {
	r := turnRun{d: Delegation{BudgetTokens: defaultBudgetTokens}, l: instance.Launcher{Name: "gemini"}, h: headlessContracts()["gemini"]}
	var out turnOutcome
	for _, line := range []string{
		`{"type":"init","timestamp":"2026-11-26T15:22:50.284Z","session_id":"g-1","model":"auto"}`,
		`{"type":"error","timestamp":"2026-11-26T15:22:51.000Z","severity":"error","message":"Model stream ended with an invalid chunk or missing finish reason."}`,
		`{"type":"result","timestamp":"2026-11-26T15:22:51.100Z","status":"error","stats":{"total_tokens":15,"input_tokens":10,"output_tokens":5,"cached":0,"input":10,"duration_ms":0,"tool_calls":0}}`,
	} {
		var ev agentEvent
		if err := r.h.parse([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		r.apply(&out, ev)
	}
	r.conclude(&out, errors.New("exit status 1"), "")
	if want := "gemini reported an error: Model stream ended with an invalid chunk or missing finish reason."; out.Failure != want {
		t.Fatalf("failure %q, want %q", out.Failure, want)
	}
}

// A CLI's stderr, as a person reads it: no colours, no stack frames, its
// last lines.
func TestStderrTail(t *testing.T) {
	in := "\x1b[31mGemini CLI is not running in a trusted directory.\x1b[0m\n" +
		"_ApiError: boom\n    at throwErrorIfNotOK (file:///x.js:1:2)\n    at async y (file:///y.js:3:4)\n  status: 500\n}\n"
	want := "Gemini CLI is not running in a trusted directory.\n_ApiError: boom\nstatus: 500\n}"
	if got := stderrTail(in); got != want {
		t.Fatalf("stderrTail:\n%q\nwant\n%q", got, want)
	}
}

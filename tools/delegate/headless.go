package delegate

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
)

// A headless contract is how one agent CLI runs a single prompt without a
// terminal and reports what it does as JSON lines: the arguments each
// delegation option becomes, and how its output lines read. The table of
// options and flags is in docs/DELEGATION.md; an option a CLI cannot
// honour is refused with INVALID_INPUT naming the option and the agent,
// never dropped.
type headless struct {
	// args are the CLI's arguments for one turn (the prompt goes on
	// standard input, so a prompt that starts with "-" is never a flag).
	args func(t turnSpec) ([]string, error)
	// parse reads one line of the CLI's output into ev; an error means
	// the line is not the CLI's JSON.
	parse func(line []byte, ev *agentEvent) error
	// usageAtEnd: the CLI reports usage only at the end of a turn, so
	// budget_tokens cannot stop a turn midway; it is enforced between
	// turns (a turn that went over says so in its result).
	usageAtEnd bool
	// cumulative: the usage at a turn's end covers the CLI's whole
	// session (codex's resumed thread), not the turn alone.
	cumulative bool
}

// turnSpec is what one turn asks of the agent CLI.
type turnSpec struct {
	Model          string
	PermissionMode string
	MaxTurns       int
	MaxTurnsSet    bool // the caller chose max_turns (the default is not an option a CLI must honour)
	Resume         string
	MCPConfig      string // the MCP config file git codex wrote for the turn (claude)
	MCPServers     []MCPServerSpec
}

// MCPServerSpec is an MCP server to attach to a delegated query (seed
// 002's mcp_servers).
type MCPServerSpec struct {
	Name    string            `json:"name"`
	Command string            `json:"command"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty" jsonschema:"for its process only; never stored"`
}

// agentEvent is one output line of an agent CLI, in common terms.
type agentEvent struct {
	Kind      string // "init", "assistant", "tool_use", "tool_result", "error" (a warning, a retry, a refusal: the turn goes on), "result"; "" for lines that carry nothing for us
	Subtype   string // result lines: the CLI's subtype (claude's success, error_max_turns, ...); error lines: what kind of notice
	Text      string
	Tool      string
	Input     json.RawMessage
	SessionID string
	Delta     bool // Text continues the previous assistant text (gemini's chunks)
	// Usage is the tokens this line reports; how to count them is
	// UsageMsg's and UsageTotal's.
	Usage *tokenUsage
	// UsageMsg is the model API message the usage is of (claude repeats
	// a message's usage on the line of each of its content blocks: it
	// counts once).
	UsageMsg string
	// UsageTotal says Usage is the turn's total as the CLI counted it
	// (claude's result, codex's turn.completed, gemini's result stats):
	// it replaces what the turn's lines added up to.
	UsageTotal bool
	// Result lines: the end of the turn.
	Result   string
	CostUSD  float64
	NumTurns int
	IsError  bool
}

// tokenUsage is a model API's token count, cache reads and writes apart
// from the rest of the input (each CLI names them its own way).
type tokenUsage struct {
	Input      int // input not read from the cache
	CacheRead  int
	CacheWrite int
	Output     int
}

func (u tokenUsage) total() int { return u.Input + u.CacheRead + u.CacheWrite + u.Output }

// headlessContracts are the agent CLIs whose headless mode git codex
// speaks. A launcher configured under another name has none: delegation
// to it is refused (point agent.claude.command at a binary that speaks
// claude's contract instead).
func headlessContracts() map[string]headless {
	return map[string]headless{
		"claude": {args: claudeArgs, parse: parseClaude},
		"codex":  {args: codexArgs, parse: parseCodex, usageAtEnd: true, cumulative: true},
		"gemini": {args: geminiArgs, parse: parseGemini, usageAtEnd: true},
	}
}

// unsupported is the refusal of an option an agent CLI has no flag for.
func unsupported(option, agent, why string) *tools.Error {
	return tools.Errorf(tools.InvalidInput, "option %s cannot be honoured by agent %s: %s; leave it out, or delegate to claude", option, agent, why).
		With("option", option).With("agent", agent)
}

// claudeArgs: `claude -p --output-format stream-json --verbose` (stream-json
// needs --verbose with -p), --resume <session_id>, --model, --max-turns,
// --permission-mode (auto: default, which refuses what needs a yes in -p;
// allow: bypassPermissions; deny: dontAsk, which refuses everything not
// pre-approved), --mcp-config <file>.
func claudeArgs(t turnSpec) ([]string, error) {
	args := []string{"-p", "--output-format", "stream-json", "--verbose"}
	if t.Resume != "" {
		args = append(args, "--resume", t.Resume)
	}
	if t.Model != "" {
		args = append(args, "--model", t.Model)
	}
	args = append(args, "--max-turns", fmt.Sprint(t.MaxTurns))
	mode := map[string]string{"auto": "default", "allow": "bypassPermissions", "deny": "dontAsk"}[t.PermissionMode]
	args = append(args, "--permission-mode", mode)
	if t.MCPConfig != "" {
		args = append(args, "--mcp-config", t.MCPConfig)
	}
	return args, nil
}

// parseClaude reads claude's stream-json (and json: the result object
// alone), as Claude Code 2.1 prints it (testdata/streams/claude-*.jsonl):
// system/init carries the session id; an assistant line carries one
// content block of a model message (text or tool_use) and that message's
// usage as the API's message_start gave it (repeated on each block's
// line, output_tokens not yet counted, cache reads and writes in their
// own fields); user lines carry tool_result blocks; system/api_retry and
// system/permission_denied say what went wrong on the way; the result
// line ends the turn with result (or, for error_* subtypes, errors[]),
// session_id, total_cost_usd, num_turns, is_error, subtype and the
// turn's usage summed over its model calls.
func parseClaude(line []byte, ev *agentEvent) error {
	var m struct {
		Type         string          `json:"type"`
		Subtype      string          `json:"subtype"`
		SessionID    string          `json:"session_id"`
		Raw          json.RawMessage `json:"message"` // a model message; permission_denied's text
		Result       string          `json:"result"`
		Errors       []string        `json:"errors"`
		TotalCostUSD float64         `json:"total_cost_usd"`
		NumTurns     int             `json:"num_turns"`
		IsError      bool            `json:"is_error"`
		Usage        *claudeUsage    `json:"usage"`
		// system/api_retry
		Attempt     int    `json:"attempt"`
		MaxRetries  int    `json:"max_retries"`
		RetryDelay  int    `json:"retry_delay_ms"`
		ErrorStatus int    `json:"error_status"`
		Error       string `json:"error"`
		// system/permission_denied
		ToolName string `json:"tool_name"`
	}
	if err := json.Unmarshal(line, &m); err != nil || m.Type == "" {
		return fmt.Errorf("not a claude stream-json message")
	}
	var msg struct {
		ID      string          `json:"id"`
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
		Usage   *claudeUsage    `json:"usage"`
	}
	var text string
	if len(m.Raw) > 0 && m.Raw[0] == '"' {
		json.Unmarshal(m.Raw, &text)
	} else if len(m.Raw) > 0 {
		if err := json.Unmarshal(m.Raw, &msg); err != nil {
			return fmt.Errorf("claude %s message: %w", m.Type, err)
		}
	}
	ev.SessionID = m.SessionID
	switch m.Type {
	case "system":
		switch m.Subtype {
		case "init":
			ev.Kind = "init"
		case "api_retry":
			ev.Kind, ev.Subtype = "error", "api_retry"
			ev.Text = fmt.Sprintf("model API error %d (%s): retry %d of %d in %d ms", m.ErrorStatus, m.Error, m.Attempt, m.MaxRetries, m.RetryDelay)
		case "permission_denied":
			ev.Kind, ev.Subtype, ev.Tool, ev.Text = "error", "permission_denied", m.ToolName, text
		}
	case "assistant", "user":
		type block struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
			ToolUseID string          `json:"tool_use_id"`
		}
		var blocks []block
		if len(msg.Content) > 0 && msg.Content[0] == '"' {
			var s string
			json.Unmarshal(msg.Content, &s)
			blocks = append(blocks, block{Type: "text", Text: s})
		} else if len(msg.Content) > 0 {
			if err := json.Unmarshal(msg.Content, &blocks); err != nil {
				return fmt.Errorf("claude %s message content: %w", m.Type, err)
			}
		}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				ev.Kind, ev.Text = "assistant", strings.TrimSpace(ev.Text+"\n"+b.Text)
			case "tool_use":
				if ev.Kind == "" {
					ev.Kind = "tool_use"
				}
				ev.Tool, ev.Input = b.Name, b.Input
			case "tool_result":
				ev.Kind, ev.Text = "tool_result", contentText(b.Content)
			}
		}
		// claude's own messages about a failed call ("API Error: ...")
		// are model "<synthetic>" and count nothing
		if m.Type == "assistant" && msg.Usage != nil && msg.Model != "<synthetic>" {
			u := msg.Usage.tokens()
			ev.Usage, ev.UsageMsg = &u, msg.ID
		}
	case "result":
		ev.Kind, ev.Result, ev.CostUSD, ev.NumTurns, ev.IsError, ev.Subtype = "result", m.Result, m.TotalCostUSD, m.NumTurns, m.IsError, m.Subtype
		ev.Text = strings.Join(m.Errors, "; ")
		if m.Usage != nil {
			u := m.Usage.tokens()
			ev.Usage, ev.UsageTotal = &u, true
		}
	}
	return nil
}

// claudeUsage is the Messages API's usage: input_tokens does not include
// the cache's.
type claudeUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

func (u claudeUsage) tokens() tokenUsage {
	return tokenUsage{Input: u.InputTokens, CacheRead: u.CacheReadInputTokens, CacheWrite: u.CacheCreationInputTokens, Output: u.OutputTokens}
}

// contentText is a tool result's content as text: a string, or the text
// blocks of a list.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &blocks)
	var parts []string
	for _, b := range blocks {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n")
}

// codexArgs: `codex exec --json` with --model, --sandbox (auto:
// workspace-write, allow: danger-full-access, deny: read-only),
// --skip-git-repo-check, -c mcp_servers.<name>.* for MCP servers, and
// `resume <thread_id>` after the flags to continue. codex exec has no turn
// limit: an explicit max_turns is refused.
func codexArgs(t turnSpec) ([]string, error) {
	if t.MaxTurnsSet {
		return nil, unsupported("max_turns", "codex", "`codex exec` has no turn limit (git codex still stops it at budget_tokens)")
	}
	args := []string{"exec", "--json", "--skip-git-repo-check"}
	if t.Model != "" {
		args = append(args, "--model", t.Model)
	}
	sandbox := map[string]string{"auto": "workspace-write", "allow": "danger-full-access", "deny": "read-only"}[t.PermissionMode]
	args = append(args, "--sandbox", sandbox)
	// each server as a [mcp_servers.<name>] table; with allow, its tools
	// are called without asking (in exec nobody could say yes: Codex
	// refuses a call that needs approval)
	approval := ""
	if t.PermissionMode == "allow" {
		approval = "approve"
	}
	for _, s := range t.MCPServers {
		args = append(args, instance.CodexServerArgs(s.Name, s.Command, s.Args, s.Env, nil, approval)...)
	}
	if t.Resume != "" {
		args = append(args, "resume", t.Resume)
	}
	return args, nil
}

// parseCodex reads `codex exec --json` events as Codex CLI 0.169 prints
// them (testdata/streams/codex-*.jsonl): thread.started (thread_id);
// item.started and item.completed of agent_message (text),
// command_execution (a command and its output), mcp_tool_call (an MCP
// server's tool, its arguments and its result or error), file_change
// (the files a patch changed) and error (a warning: the turn goes on);
// error events (a stream error, "Reconnecting... n/5"); turn.completed
// (usage, only at the turn's end and, on a resumed thread, counting the
// whole thread: input_tokens includes cached_input_tokens); turn.failed.
func parseCodex(line []byte, ev *agentEvent) error {
	var m struct {
		Type     string `json:"type"`
		ThreadID string `json:"thread_id"`
		Item     struct {
			Type             string          `json:"type"`
			Text             string          `json:"text"`
			Message          string          `json:"message"`
			Command          string          `json:"command"`
			AggregatedOutput string          `json:"aggregated_output"`
			ExitCode         *int            `json:"exit_code"`
			Server           string          `json:"server"`
			Tool             string          `json:"tool"`
			Arguments        json.RawMessage `json:"arguments"`
			Result           *struct {
				Content json.RawMessage `json:"content"`
			} `json:"result"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
			Changes json.RawMessage `json:"changes"`
			Status  string          `json:"status"`
		} `json:"item"`
		Usage *struct {
			InputTokens       int `json:"input_tokens"`
			CachedInputTokens int `json:"cached_input_tokens"`
			OutputTokens      int `json:"output_tokens"`
		} `json:"usage"`
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(line, &m); err != nil || m.Type == "" {
		return fmt.Errorf("not a codex exec --json event")
	}
	it := m.Item
	switch m.Type {
	case "thread.started":
		ev.Kind, ev.SessionID = "init", m.ThreadID
	case "item.started":
		switch it.Type {
		case "command_execution":
			in, _ := json.Marshal(map[string]string{"command": it.Command})
			ev.Kind, ev.Tool, ev.Input = "tool_use", "command", in
		case "mcp_tool_call":
			ev.Kind, ev.Tool, ev.Input = "tool_use", it.Server+"/"+it.Tool, it.Arguments
		}
	case "item.completed":
		switch it.Type {
		case "agent_message":
			ev.Kind, ev.Text = "assistant", it.Text
		case "command_execution":
			ev.Kind, ev.Tool, ev.Text = "tool_result", "command", it.AggregatedOutput
			if it.ExitCode != nil && *it.ExitCode != 0 {
				ev.Text = strings.TrimRight(ev.Text, "\n") + fmt.Sprintf("\n(exit code %d)", *it.ExitCode)
			}
		case "mcp_tool_call":
			ev.Kind, ev.Tool = "tool_result", it.Server+"/"+it.Tool
			switch {
			case it.Error != nil:
				ev.Text = "error: " + it.Error.Message
			case it.Result != nil:
				ev.Text = contentText(it.Result.Content)
			}
		case "file_change":
			in, _ := json.Marshal(map[string]any{"changes": it.Changes, "status": it.Status})
			ev.Kind, ev.Tool, ev.Input = "tool_use", "file_change", in
		case "error":
			ev.Kind, ev.Subtype, ev.Text = "error", "warning", it.Message
		}
	case "turn.completed":
		ev.Kind, ev.NumTurns = "result", 1
		if m.Usage != nil {
			// input_tokens counts the cached ones too
			ev.Usage = &tokenUsage{Input: m.Usage.InputTokens - m.Usage.CachedInputTokens, CacheRead: m.Usage.CachedInputTokens, Output: m.Usage.OutputTokens}
			ev.UsageTotal = true
		}
	case "turn.failed":
		ev.Kind, ev.IsError, ev.Text = "result", true, m.Error.Message
	case "error":
		ev.Kind, ev.Text = "error", m.Message
	}
	return nil
}

// geminiArgs: `gemini --skip-trust --prompt= --output-format stream-json`
// (the prompt, on standard input, is what -p appends to), --model,
// --approval-mode (auto: default, allow: yolo, deny: plan), --resume
// <session_id>. --skip-trust trusts the working directory for this run
// only: headless, Gemini CLI otherwise exits 55 in a folder a person never
// trusted interactively, where claude -p and codex exec ask nothing (what
// the agent may do there is the permission mode's business). Gemini CLI
// has no turn-limit flag and reads MCP servers only from its settings:
// both are refused.
func geminiArgs(t turnSpec) ([]string, error) {
	if t.MaxTurnsSet {
		return nil, unsupported("max_turns", "gemini", "Gemini CLI has no turn-limit flag (model.maxSessionTurns is a setting)")
	}
	if len(t.MCPServers) > 0 {
		return nil, unsupported("mcp_servers", "gemini", "Gemini CLI reads MCP servers from its settings files only")
	}
	args := []string{"--skip-trust", "--prompt=", "--output-format", "stream-json"}
	if t.Model != "" {
		args = append(args, "--model", t.Model)
	}
	mode := map[string]string{"auto": "default", "allow": "yolo", "deny": "plan"}[t.PermissionMode]
	args = append(args, "--approval-mode", mode)
	if t.Resume != "" {
		args = append(args, "--resume", t.Resume)
	}
	return args, nil
}

// parseGemini reads Gemini CLI's stream-json events as 0.61 prints them
// (testdata/streams/gemini-*.jsonl): init (session id), message (the
// user's prompt; the assistant's text in chunks, which continue across a
// tool call: the narration before it is not the answer), tool_use,
// tool_result, error (severity warning or error; the turn may go on),
// result (status; an error object, which an error status may lack when
// an error event said why; stats, the only usage it reports, for this
// run of the CLI).
func parseGemini(line []byte, ev *agentEvent) error {
	var m struct {
		Type       string          `json:"type"`
		SessionID  string          `json:"session_id"`
		SessionID2 string          `json:"sessionId"`
		Role       string          `json:"role"`
		Content    string          `json:"content"`
		Delta      bool            `json:"delta"`
		ToolName   string          `json:"tool_name"`
		Parameters json.RawMessage `json:"parameters"`
		Output     string          `json:"output"`
		Status     string          `json:"status"`
		Severity   string          `json:"severity"`
		Message    string          `json:"message"`
		Error      *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
		Stats *struct {
			TotalTokens  int `json:"total_tokens"`
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
			Cached       int `json:"cached"`
			ToolCalls    int `json:"tool_calls"`
		} `json:"stats"`
	}
	if err := json.Unmarshal(line, &m); err != nil || m.Type == "" {
		return fmt.Errorf("not a gemini stream-json event")
	}
	switch m.Type {
	case "init":
		ev.Kind, ev.SessionID = "init", m.SessionID
		if ev.SessionID == "" {
			ev.SessionID = m.SessionID2
		}
	case "message":
		if m.Role == "assistant" {
			ev.Kind, ev.Text, ev.Delta = "assistant", m.Content, m.Delta
		}
	case "tool_use":
		ev.Kind, ev.Tool, ev.Input = "tool_use", m.ToolName, m.Parameters
	case "tool_result":
		ev.Kind, ev.Text = "tool_result", m.Output
		if m.Status == "error" && m.Error != nil {
			ev.Text = "error: " + m.Error.Message
		}
	case "error":
		ev.Kind, ev.Subtype, ev.Text = "error", m.Severity, m.Message
	case "result":
		ev.Kind, ev.NumTurns = "result", 1
		if m.Stats != nil {
			// input_tokens counts the cached ones too
			u := tokenUsage{Input: m.Stats.InputTokens - m.Stats.Cached, CacheRead: m.Stats.Cached, Output: m.Stats.OutputTokens}
			if d := m.Stats.TotalTokens - u.total(); d > 0 {
				u.Output += d // thoughts and tool-use prompts the total has and the parts do not
			}
			ev.Usage, ev.UsageTotal = &u, true
		}
		if m.Status == "error" {
			ev.IsError = true
			if m.Error != nil {
				ev.Text = m.Error.Message
			}
		}
	}
	return nil
}

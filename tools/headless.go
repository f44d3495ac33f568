package tools

import (
	"encoding/json"
	"fmt"
	"strings"
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
	Env     map[string]string `json:"env,omitempty" jsonschema:"passed to the server's process only; never stored in the state"`
}

// agentEvent is one output line of an agent CLI, in common terms.
type agentEvent struct {
	Kind      string // "init", "assistant", "tool_use", "tool_result", "result", "error"; "" for lines that carry nothing for us
	Text      string
	Tool      string
	Input     json.RawMessage
	SessionID string
	Tokens    int  // tokens this line reports spent (counted against budget_tokens)
	Delta     bool // Text continues the previous assistant text (gemini's chunks)
	// Result lines: the end of the turn.
	Result   string
	CostUSD  float64
	NumTurns int
	IsError  bool
	Subtype  string
}

// headlessContracts are the agent CLIs whose headless mode git codex
// speaks. A launcher configured under another name has none: delegation
// to it is refused (point agent.claude.command at a binary that speaks
// claude's contract instead).
func headlessContracts() map[string]headless {
	return map[string]headless{
		"claude": {args: claudeArgs, parse: parseClaude},
		"codex":  {args: codexArgs, parse: parseCodex},
		"gemini": {args: geminiArgs, parse: parseGemini},
	}
}

// unsupported is the refusal of an option an agent CLI has no flag for.
func unsupported(option, agent, why string) *Error {
	return Errorf(InvalidInput, "option %s cannot be honoured by agent %s: %s; leave it out, or delegate to claude", option, agent, why).
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
// alone): system/init carries the session id; assistant messages carry
// text and tool_use blocks and their usage; user messages carry
// tool_result blocks; the result line ends the turn with result,
// session_id, total_cost_usd, num_turns, is_error and subtype.
func parseClaude(line []byte, ev *agentEvent) error {
	var m struct {
		Type      string `json:"type"`
		Subtype   string `json:"subtype"`
		SessionID string `json:"session_id"`
		Message   struct {
			Content json.RawMessage `json:"content"`
			Usage   *claudeUsage    `json:"usage"`
		} `json:"message"`
		Result       string       `json:"result"`
		TotalCostUSD float64      `json:"total_cost_usd"`
		NumTurns     int          `json:"num_turns"`
		IsError      bool         `json:"is_error"`
		Usage        *claudeUsage `json:"usage"`
	}
	if err := json.Unmarshal(line, &m); err != nil || m.Type == "" {
		return fmt.Errorf("not a claude stream-json message")
	}
	ev.SessionID = m.SessionID
	switch m.Type {
	case "system":
		if m.Subtype == "init" {
			ev.Kind = "init"
		}
	case "assistant", "user":
		var blocks []struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			Content   json.RawMessage `json:"content"`
			ToolUseID string          `json:"tool_use_id"`
		}
		if len(m.Message.Content) > 0 && m.Message.Content[0] == '"' {
			var s string
			json.Unmarshal(m.Message.Content, &s)
			blocks = append(blocks, struct {
				Type      string          `json:"type"`
				Text      string          `json:"text"`
				Name      string          `json:"name"`
				Input     json.RawMessage `json:"input"`
				Content   json.RawMessage `json:"content"`
				ToolUseID string          `json:"tool_use_id"`
			}{Type: "text", Text: s})
		} else if len(m.Message.Content) > 0 {
			if err := json.Unmarshal(m.Message.Content, &blocks); err != nil {
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
		if m.Type == "assistant" && m.Message.Usage != nil {
			ev.Tokens = m.Message.Usage.total()
		}
	case "result":
		ev.Kind, ev.Result, ev.CostUSD, ev.NumTurns, ev.IsError, ev.Subtype = "result", m.Result, m.TotalCostUSD, m.NumTurns, m.IsError, m.Subtype
	}
	return nil
}

type claudeUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

func (u claudeUsage) total() int { return u.InputTokens + u.OutputTokens }

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
		args = append(args, codexServerArgs(s.Name, s.Command, s.Args, s.Env, nil, approval)...)
	}
	if t.Resume != "" {
		args = append(args, "resume", t.Resume)
	}
	return args, nil
}

// parseCodex reads `codex exec --json` events: thread.started (thread_id),
// item.completed (agent_message text; command_execution as a tool use and
// its output), turn.completed (usage; ends the turn), turn.failed and
// error.
func parseCodex(line []byte, ev *agentEvent) error {
	var m struct {
		Type     string `json:"type"`
		ThreadID string `json:"thread_id"`
		Item     struct {
			Type             string `json:"type"`
			Text             string `json:"text"`
			Command          string `json:"command"`
			AggregatedOutput string `json:"aggregated_output"`
		} `json:"item"`
		Usage struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
		} `json:"usage"`
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(line, &m); err != nil || m.Type == "" {
		return fmt.Errorf("not a codex exec --json event")
	}
	switch m.Type {
	case "thread.started":
		ev.Kind, ev.SessionID = "init", m.ThreadID
	case "item.completed":
		switch m.Item.Type {
		case "agent_message":
			ev.Kind, ev.Text = "assistant", m.Item.Text
		case "command_execution":
			ev.Kind, ev.Tool, ev.Text = "tool_result", "command", m.Item.AggregatedOutput
		}
	case "item.started":
		if m.Item.Type == "command_execution" {
			in, _ := json.Marshal(map[string]string{"command": m.Item.Command})
			ev.Kind, ev.Tool, ev.Input = "tool_use", "command", in
		}
	case "turn.completed":
		ev.Kind, ev.Tokens, ev.NumTurns = "result", m.Usage.InputTokens+m.Usage.OutputTokens, 1
	case "turn.failed":
		ev.Kind, ev.IsError, ev.Text = "result", true, m.Error.Message
	case "error":
		ev.Kind, ev.Text = "error", m.Message
	}
	return nil
}

// geminiArgs: `gemini --prompt= --output-format stream-json` (the prompt,
// on standard input, is what -p appends to), --model, --approval-mode
// (auto: default, allow: yolo, deny: plan), --resume <session_id>. Gemini
// CLI has no turn-limit flag and reads MCP servers only from its
// settings: both are refused.
func geminiArgs(t turnSpec) ([]string, error) {
	if t.MaxTurnsSet {
		return nil, unsupported("max_turns", "gemini", "Gemini CLI has no turn-limit flag (model.maxSessionTurns is a setting)")
	}
	if len(t.MCPServers) > 0 {
		return nil, unsupported("mcp_servers", "gemini", "Gemini CLI reads MCP servers from its settings files only")
	}
	args := []string{"--prompt=", "--output-format", "stream-json"}
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

// parseGemini reads Gemini CLI's stream-json events: init (session id),
// message (assistant chunks), tool_use, tool_result, error, result (stats;
// ends the turn).
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
		Message    string          `json:"message"`
		Error      *struct {
			Message string `json:"message"`
		} `json:"error"`
		Stats struct {
			TotalTokens int `json:"total_tokens"`
			ToolCalls   int `json:"tool_calls"`
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
	case "error":
		ev.Kind, ev.Text = "error", m.Message
	case "result":
		ev.Kind, ev.Tokens, ev.NumTurns = "result", m.Stats.TotalTokens, 1
		if m.Status == "error" {
			ev.IsError = true
			if m.Error != nil {
				ev.Text = m.Error.Message
			}
		}
	}
	return nil
}

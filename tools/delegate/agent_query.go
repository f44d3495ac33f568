package delegate

import (
	"context"
	"os"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
	"github.com/gitcodex/git-codex/tools/mail"
)

// DelegateQueryIn is agent_query's (and agent_query_stream's) input.
type DelegateQueryIn struct {
	Prompt         string          `json:"prompt" jsonschema:"the job" text:"multiline"`
	Agent          string          `json:"agent,omitempty" jsonschema:"claude (default), codex or gemini"`
	Model          string          `json:"model,omitempty" jsonschema:"e.g. sonnet, opus; default: the CLI's"`
	MaxTurns       int             `json:"max_turns,omitempty" jsonschema:"most agent turns (default 30)"`
	BudgetTokens   int             `json:"budget_tokens,omitempty" jsonschema:"tokens per turn; codex and gemini: checked between turns (default 100000)"`
	TimeoutSeconds int             `json:"timeout_seconds,omitempty" jsonschema:"per turn (default 1800)"`
	WorkingDir     string          `json:"working_dir,omitempty" jsonschema:"default: your worktree"`
	PermissionMode string          `json:"permission_mode,omitempty" jsonschema:"auto (default), allow or deny"`
	MCPServers     []MCPServerSpec `json:"mcp_servers,omitempty" jsonschema:"MCP servers for the agent"`
}

// DelegateResult is what a delegated turn returns (seed 002's output).
// A turn stopped early (budget_tokens, max_turns, an interrupt) still
// succeeds, with partial set and reason and error saying why: the seed's
// third error level.
type DelegateResult struct {
	SessionID      string     `json:"session_id"`
	Result         string     `json:"result"`
	CostUSD        float64    `json:"cost_usd"`
	NumTurns       int        `json:"num_turns"`
	TokensUsed     int        `json:"tokens_used"`
	Status         string     `json:"status"`
	Agent          string     `json:"agent"`
	AgentSessionID string     `json:"agent_session_id,omitempty" jsonschema:"the agent CLI's own session id (what --resume gets)"`
	Partial        bool       `json:"partial,omitempty"`
	Reason         string     `json:"reason,omitempty" jsonschema:"why the turn stopped early (budget_tokens, max_turns, timeout, interrupted or disconnected), or went over budget_tokens without being stopped (budget_tokens, partial false)"`
	Error          string     `json:"error,omitempty"`
	BudgetEnforced string     `json:"budget_enforced" jsonschema:"how budget_tokens is enforced for this agent: during_turn (claude reports usage as it goes) or between_turns (codex and gemini report it at a turn's end only)"`
	OutputCut      *OutputCut `json:"output_cut,omitempty" jsonschema:"present when git codex did not keep all of the agent CLI's output: lines over delegate.max_line_bytes had their long strings cut (each ends [... N bytes cut by git codex]) or were skipped, or lines past delegate.max_transcript_bytes were not written to the transcript"`
}

// AgentQuery runs a prompt on an agent CLI and waits for its result.
var AgentQuery = tools.Define("agent_query", "delegate.query",
	"Delegate a prompt to an agent CLI (claude, codex, gemini) headless; returns its result, cost and turns. The session is recorded, to continue, interrupt or abort.",
	tools.CLI{Path: "delegate query", Args: []string{"prompt"}, Envelope: true},
	func(ctx context.Context, c *tools.Call, in DelegateQueryIn) (*DelegateResult, error) {
		return startQuery(c, in, false)
	})

// startQuery checks a query, records its session RUNNING and runs its
// first turn after the commit.
func startQuery(c *tools.Call, in DelegateQueryIn, stream bool) (*DelegateResult, error) {
	if in.Agent == "" {
		in.Agent = defaultDelegateAgent
	}
	if in.PermissionMode == "" {
		in.PermissionMode = defaultPermissionMode
	}
	maxTurnsSet := in.MaxTurns != 0
	if in.MaxTurns == 0 {
		in.MaxTurns = defaultMaxTurns
	}
	if in.BudgetTokens == 0 {
		in.BudgetTokens = defaultBudgetTokens
	}
	if in.MaxTurns < 0 || in.MaxTurns > 1000 {
		return nil, tools.Errorf(tools.InvalidInput, "max_turns must be between 1 and 1000, got %d", in.MaxTurns).With("field", "max_turns")
	}
	if in.BudgetTokens < 0 {
		return nil, tools.Errorf(tools.InvalidInput, "budget_tokens must be positive, got %d", in.BudgetTokens).With("field", "budget_tokens")
	}
	if in.TimeoutSeconds < 0 || in.TimeoutSeconds > instance.MaxTimeoutSeconds {
		return nil, tools.Errorf(tools.InvalidInput, "timeout_seconds must be between 1 and %d, got %d", instance.MaxTimeoutSeconds, in.TimeoutSeconds).With("field", "timeout_seconds")
	}
	if err := checkPrompt(in.Prompt); err != nil {
		return nil, err
	}
	if err := checkDelegateOptions(in.Model, in.PermissionMode); err != nil {
		return nil, err
	}
	for _, s := range in.MCPServers {
		if !serverNamePattern.MatchString(s.Name) || s.Command == "" {
			return nil, tools.Errorf(tools.InvalidInput, "each of mcp_servers needs a name (letters, digits, - and _) and a command; got name %q, command %q", s.Name, s.Command).With("field", "mcp_servers")
		}
	}
	dir, err := delegateWorkDir(c, in.WorkingDir)
	if err != nil {
		return nil, err
	}
	l, h, err := delegateLauncher(c, in.Agent)
	if err != nil {
		return nil, err
	}
	spec := turnSpec{Model: in.Model, PermissionMode: in.PermissionMode, MaxTurns: in.MaxTurns, MaxTurnsSet: maxTurnsSet, MCPServers: in.MCPServers}
	if _, err := h.args(spec); err != nil {
		return nil, err
	}
	now := c.Tx.Now()
	host, _ := os.Hostname()
	d := Delegation{
		ID: c.Tx.NewID("dlg"), Agent: l.Name, Model: in.Model, PermissionMode: in.PermissionMode, WorkingDir: dir,
		MaxTurns: in.MaxTurns, BudgetTokens: in.BudgetTokens, TimeoutSeconds: in.TimeoutSeconds, Owner: c.Caller.ID, Host: host, CreatedAt: now,
	}
	for _, s := range in.MCPServers {
		d.MCPServers = append(d.MCPServers, s.Name)
	}
	c.Summarize("%s delegated to %s: %s", c.Caller.ID, l.Name, mail.OneLineCut(in.Prompt))
	return beginTurn(c, d, l, h, spec, in.Prompt, stream)
}

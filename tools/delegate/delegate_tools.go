package delegate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
	"github.com/gitcodex/git-codex/tools/mail"
)

// Seed 002's defaults.
const (
	defaultDelegateAgent  = "claude"
	defaultMaxTurns       = 30
	defaultBudgetTokens   = 100000
	defaultPermissionMode = "auto"
	maxPromptBytes        = 256 << 10
	// defaultTimeoutSeconds is a turn's wall-clock limit when the query
	// names none: an agent CLI that waits for a model API that is not
	// there (codex retries "Reconnecting..." without end) is stopped.
	defaultTimeoutSeconds = 1800
)

// serverNamePattern is what an MCP server's name in mcp_servers looks
// like: 1-32 of a-z, 0-9, _ and -, starting with a letter (the shape of
// a cycle's role names, which it shared until tools/lock took those).
var serverNamePattern = tools.LazyRegexp(`^[a-z][a-z0-9_-]{0,31}$`)

// modelPattern is what a model name may look like (an alias such as
// sonnet, or a full id such as claude-sonnet-4-5 or gpt-5-codex).
var modelPattern = tools.LazyRegexp(`^[A-Za-z0-9][A-Za-z0-9._:/-]{0,99}$`)

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

// AgentQueryStream is agent_query that reports each message as it comes.
var AgentQueryStream = tools.Define("agent_query_stream", "delegate.query",
	"Same as agent_query, and each message (assistant text, tool use, tool result) is reported as it comes: as MCP progress notifications "+
		"(when the client sends a progress token), or printed on stderr from the CLI. Returns the final result.",
	tools.CLI{Path: "delegate stream", Args: []string{"prompt"}, Envelope: true},
	func(ctx context.Context, c *tools.Call, in DelegateQueryIn) (*DelegateResult, error) {
		return startQuery(c, in, true)
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

// beginTurn records a turn RUNNING (holding the session's work mark from
// before the commit, so a runner that dies leaves a RUNNING session whose
// mark nobody holds) and runs it after the commit.
func beginTurn(c *tools.Call, d Delegation, l instance.Launcher, h headless, spec turnSpec, prompt string, stream bool) (*DelegateResult, error) {
	release, err := c.Repo.HoldWork(d.workMark())
	if err != nil {
		return nil, tools.Errorf(tools.SessionBusy, "delegated session %s is running a turn in another process", d.ID).With("session_id", d.ID)
	}
	c.Tx.OnAbort(func(context.Context) error { release(); return nil })
	d.Status, d.StatusReason, d.Stop = DelegationRunning, "", ""
	d.Turns = append(d.Turns, DelegationTurn{Prompt: prompt, Model: d.Model, PermissionMode: d.PermissionMode, Status: DelegationRunning, By: c.Caller.ID, StartedAt: c.Tx.Now()})
	if err := putDelegation(c, &d); err != nil {
		return nil, err
	}
	c.Target(d.ID)
	out := &DelegateResult{SessionID: d.ID, Agent: d.Agent, Status: DelegationRunning, AgentSessionID: d.AgentSessionID, BudgetEnforced: budgetEnforcement(h)}
	run := turnRun{d: d, l: l, h: h, spec: spec, prompt: prompt, stream: stream, timeout: d.timeout(),
		maxLine: c.Config.IntValue("delegate.max_line_bytes"), maxTranscript: int64(c.Config.IntValue("delegate.max_transcript_bytes"))}
	c.After(func(ctx context.Context, f *tools.Followup) error {
		defer release()
		o := run.run(ctx, f.Store.GitDir(), tools.ProgressOf(ctx))
		return finishTurn(context.WithoutCancel(ctx), f, d.ID, o, out)
	})
	return out, nil
}

// budgetEnforcement is how budget_tokens is enforced for an agent CLI.
func budgetEnforcement(h headless) string {
	if h.usageAtEnd {
		return "between_turns"
	}
	return "during_turn"
}

// timeout is the wall-clock limit of each of the session's turns.
func (d Delegation) timeout() time.Duration {
	if d.TimeoutSeconds > 0 {
		return time.Duration(d.TimeoutSeconds) * time.Second
	}
	return defaultTimeoutSeconds * time.Second
}

// finishTurn records a turn's outcome, and turns it into the call's
// answer: out (a partial result is still an answer), or the error.
func finishTurn(ctx context.Context, f *tools.Followup, id string, o turnOutcome, out *DelegateResult) error {
	var final Delegation
	err := f.Record(ctx, func(c *tools.Call) error {
		d, err := getDelegation(c.Tx, id)
		if err != nil {
			return err
		}
		status, reason := DelegationDone, o.Reason
		switch {
		case d.Stop == "abort":
			status, reason = DelegationAborted, "aborted by agent_abort"
		case d.Stop == "interrupt" && !(o.Finished && o.Failure == "" && o.Reason == ""):
			// the SIGINT it asked for ended the process (with 130, no result)
			status, reason = DelegationInterrupted, ReasonInterrupted
			o.Failure = ""
		case o.Failure != "":
			status, reason = DelegationFailed, o.Failure
		case o.Reason != "":
			status = DelegationInterrupted
		}
		if o.AgentSessionID != "" {
			d.AgentSessionID = o.AgentSessionID
		}
		d.Status, d.StatusReason, d.Stop = status, reason, ""
		if status == DelegationDone {
			d.StatusReason = ""
		}
		d.CostUSD += o.CostUSD
		d.NumTurns += o.NumTurns
		d.TokensUsed += o.Tokens
		if o.AgentTokens > 0 {
			d.AgentTokens = o.AgentTokens
		}
		end := c.Tx.Now()
		t := &d.Turns[len(d.Turns)-1]
		t.Status, t.Result, t.CostUSD, t.NumTurns, t.Tokens, t.EndedAt = status, tools.Truncate(o.Result, 64<<10), o.CostUSD, o.NumTurns, o.Tokens, &end
		if status != DelegationDone {
			t.Reason = reason
		} else if o.OverBudget {
			t.Reason = ReasonBudget
		}
		if o.Failure != "" {
			t.Error = o.Failure
		}
		t.OutputCut = o.Cut
		c.Target(id)
		c.Summarize("%s: delegated turn %s%s", id, status, map[bool]string{true: " (" + mail.OneLineCut(reason) + ")", false: ""}[status != DelegationDone])
		final = d
		return putDelegation(c, &d)
	})
	if err != nil {
		return err
	}
	out.Status, out.AgentSessionID, out.Result = final.Status, final.AgentSessionID, o.Result
	out.CostUSD, out.NumTurns, out.TokensUsed = o.CostUSD, o.NumTurns, o.Tokens
	out.OutputCut = o.Cut
	switch final.Status {
	case DelegationAborted:
		return tools.Errorf(tools.SessionAborted, "delegated session %s was aborted: its process group was killed", id).With("session_id", id).With("status", final.Status)
	case DelegationFailed:
		msg := o.Failure + "; the session is recorded FAILED"
		if o.Stderr != "" {
			// what the CLI said on its way out is the reason a person needs
			msg += "\n" + final.Agent + "'s stderr ends:\n  " + strings.ReplaceAll(tools.Truncate(o.Stderr, 1000), "\n", "\n  ")
		}
		// a CLI that was never signed in or set up fails here first
		msg += "\n`git codex doctor " + final.Agent + "` checks what " + final.Agent + " needs once (sign-in, first-run setup)"
		e := tools.Errorf(tools.AgentFailed, "%s", msg).With("session_id", id).With("agent", final.Agent).With("exit_code", o.ExitCode)
		if o.Stderr != "" {
			e = e.With("stderr", tools.Truncate(o.Stderr, 1000))
		}
		return e
	case DelegationInterrupted:
		out.Partial = true
		out.Reason = final.StatusReason
		out.Error = partialError(final, o)
	case DelegationDone:
		if o.OverBudget {
			out.Reason = ReasonBudget
			out.Error = fmt.Sprintf("Budget exceeded: used %d of %d tokens; %s reports usage only at the end of a turn, so budget_tokens is enforced between turns: this turn ran to its end", o.Tokens, final.BudgetTokens, final.Agent)
		}
	}
	return nil
}

// partialError says why a turn's result is partial.
func partialError(d Delegation, o turnOutcome) string {
	switch d.StatusReason {
	case ReasonBudget:
		return fmt.Sprintf("Budget exceeded: used %d of %d tokens", o.Tokens, d.BudgetTokens)
	case ReasonMaxTurns:
		return fmt.Sprintf("Turn limit reached: max_turns %d", d.MaxTurns)
	case ReasonDisconnect:
		return "the caller disconnected; the turn was stopped"
	case ReasonTimeout:
		msg := fmt.Sprintf("Time limit reached: the turn ran longer than %s (timeout_seconds) and was stopped", d.timeout())
		if o.LastError != "" {
			msg += "; " + d.Agent + " last reported: " + tools.Truncate(o.LastError, 300)
		}
		return msg
	}
	return "interrupted by agent_interrupt"
}

// checkPrompt refuses an empty or oversized prompt.
func checkPrompt(p string) error {
	if len(p) == 0 || len(p) > maxPromptBytes {
		return tools.Errorf(tools.InvalidInput, "prompt must be 1 to %d bytes, got %d", maxPromptBytes, len(p)).With("field", "prompt")
	}
	return nil
}

// checkDelegateOptions checks a model name and a permission mode.
func checkDelegateOptions(model, mode string) error {
	if model != "" && !modelPattern.MatchString(model) {
		return tools.Errorf(tools.InvalidInput, "model %q is not a model name (e.g. sonnet, opus, haiku, or a full model id)", model).With("field", "model")
	}
	if mode != "" && !slices.Contains(permissionModes, mode) {
		return tools.Errorf(tools.InvalidInput, "permission_mode %q: use auto, allow or deny", mode).With("field", "permission_mode").With("allowed", permissionModes)
	}
	return nil
}

// delegateLauncher finds the agent's launcher (agent.<name>.command
// shared with spawn), its headless contract, and checks its binary.
func delegateLauncher(c *tools.Call, agent string) (instance.Launcher, headless, error) {
	l, err := instance.LauncherFor(c.Config, agent)
	if err != nil {
		return l, headless{}, err
	}
	h, ok := headlessContracts()[l.Name]
	if !ok {
		return l, h, tools.Errorf(tools.InvalidInput, "agent %q has no headless mode git codex knows; delegate to claude, codex or gemini (agent.<name>.command may point those at another binary that speaks their contract)", agent).With("agent", agent)
	}
	if err := l.CheckProgram(exec.LookPath); err != nil {
		return l, h, err
	}
	return l, h, nil
}

// delegateWorkDir is where the agent runs: working_dir (relative to the
// repository's top), else the calling instance's worktree, else the top
// of the working tree the call came from.
func delegateWorkDir(c *tools.Call, dir string) (string, error) {
	if dir == "" {
		if c.Agent != nil && c.Agent.Worktree != "" {
			if st, err := os.Stat(c.Agent.Worktree); err == nil && st.IsDir() {
				return c.Agent.Worktree, nil
			}
		}
		return c.Repo.WorkDir(), nil
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(c.Repo.WorkDir(), dir)
	}
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return "", tools.Errorf(tools.InvalidInput, "working_dir %q is not a directory", dir).With("field", "working_dir")
	}
	return filepath.Clean(dir), nil
}

// DelegateContinueIn is agent_continue's input.
type DelegateContinueIn struct {
	SessionID string `json:"session_id"`
	Prompt    string `json:"prompt" text:"multiline"`
}

// AgentContinue runs one more turn of a delegated session.
var AgentContinue = tools.Define("agent_continue", "delegate.continue",
	"Continue a delegated session with a new prompt: the agent CLI resumes its own session (claude --resume <session_id>) with the session's current model and permission mode.",
	tools.CLI{Path: "delegate continue", Args: []string{"session_id", "prompt"}, Envelope: true},
	func(ctx context.Context, c *tools.Call, in DelegateContinueIn) (*DelegateResult, error) {
		if err := checkPrompt(in.Prompt); err != nil {
			return nil, err
		}
		d, err := nextTurn(c, in.SessionID)
		if err != nil {
			return nil, err
		}
		l, h, spec, err := resumeSpec(c, d)
		if err != nil {
			return nil, err
		}
		c.Summarize("%s continued %s: %s", c.Caller.ID, d.ID, mail.OneLineCut(in.Prompt))
		return beginTurn(c, d, l, h, spec, in.Prompt, false)
	})

// nextTurn reads a session the caller may control and that can take a
// turn: not running one (a RUNNING session whose runner died is recorded
// FAILED first), and whose agent reported its session id.
func nextTurn(c *tools.Call, id string) (Delegation, error) {
	d, err := controlled(c, id)
	if err != nil {
		return d, err
	}
	if d.Status == DelegationRunning {
		if c.Repo.WorkHeld(d.workMark()) {
			return d, tools.Errorf(tools.SessionBusy, "delegated session %s is running a turn; wait for its result or stop it with `git codex delegate interrupt %s`", id, id).With("session_id", id)
		}
		d.Status, d.StatusReason = DelegationFailed, "its runner died before recording the turn's end"
	}
	if d.AgentSessionID == "" {
		return d, tools.Errorf(tools.InvalidAgentState, "delegated session %s has no %s session to resume (its first turn never reported one); start a new query", id, d.Agent).With("session_id", id)
	}
	return d, nil
}

// resumeSpec is the next turn of d: its agent, and its options now.
func resumeSpec(c *tools.Call, d Delegation) (instance.Launcher, headless, turnSpec, error) {
	l, h, err := delegateLauncher(c, d.Agent)
	if err != nil {
		return l, h, turnSpec{}, err
	}
	spec := turnSpec{Model: d.Model, PermissionMode: d.PermissionMode, MaxTurns: d.MaxTurns, Resume: d.AgentSessionID}
	_, err = h.args(spec)
	return l, h, spec, err
}

// DelegateResumeIn is agent_resume's input.
type DelegateResumeIn struct {
	TrajectoryPath string `json:"trajectory_path,omitempty" jsonschema:"a trajectory file written by git codex delegate export"`
	SessionID      string `json:"session_id,omitempty" jsonschema:"or a delegated session's id"`
	Prompt         string `json:"prompt,omitempty" jsonschema:"default: Continue from where we left off." text:"multiline"`
}

const defaultResumePrompt = "Continue from where we left off."

// AgentResume resumes a session from a trajectory file or by id.
var AgentResume = tools.Define("agent_resume", "delegate.resume",
	"Resume a delegated session from a trajectory file (git codex delegate export) or by session id, with an optional prompt. "+
		"A trajectory starts a new session owned by the caller that resumes the agent CLI's own session.",
	tools.CLI{Path: "delegate resume", Envelope: true},
	func(ctx context.Context, c *tools.Call, in DelegateResumeIn) (*DelegateResult, error) {
		if (in.TrajectoryPath == "") == (in.SessionID == "") {
			return nil, tools.Errorf(tools.InvalidInput, "give exactly one of trajectory_path and session_id").With("field", "trajectory_path")
		}
		if in.Prompt == "" {
			in.Prompt = defaultResumePrompt
		}
		if err := checkPrompt(in.Prompt); err != nil {
			return nil, err
		}
		var d Delegation
		if in.SessionID != "" {
			var err error
			if d, err = nextTurn(c, in.SessionID); err != nil {
				return nil, err
			}
		} else {
			t, err := readTrajectory(c, in.TrajectoryPath)
			if err != nil {
				return nil, err
			}
			dir, err := delegateWorkDir(c, t.WorkingDir)
			if err != nil {
				dir, _ = delegateWorkDir(c, "")
			}
			host, _ := os.Hostname()
			d = Delegation{
				ID: c.Tx.NewID("dlg"), Agent: t.Agent, AgentSessionID: t.AgentSessionID, Model: t.Model, PermissionMode: t.PermissionMode,
				WorkingDir: dir, MaxTurns: t.MaxTurns, BudgetTokens: t.BudgetTokens, TimeoutSeconds: t.TimeoutSeconds, AgentTokens: t.AgentTokens,
				Owner: c.Caller.ID, Host: host, CreatedAt: c.Tx.Now(),
			}
			if d.MaxTurns <= 0 {
				d.MaxTurns = defaultMaxTurns
			}
			if d.BudgetTokens <= 0 {
				d.BudgetTokens = defaultBudgetTokens
			}
		}
		l, h, spec, err := resumeSpec(c, d)
		if err != nil {
			return nil, err
		}
		c.Summarize("%s resumed %s (%s)", c.Caller.ID, d.ID, d.Agent)
		return beginTurn(c, d, l, h, spec, in.Prompt, false)
	})

// Trajectory is a delegated session as `git codex delegate export` writes
// it: the session's record and its transcript (the agent CLI's JSON lines,
// as received).
type Trajectory struct {
	Version    int               `json:"version"`
	Session    Delegation        `json:"session"`
	Transcript []json.RawMessage `json:"transcript"`
}

// trajectorySession is what agent_resume needs from a trajectory.
func readTrajectory(c *tools.Call, path string) (Delegation, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(c.Repo.WorkDir(), path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Delegation{}, tools.Errorf(tools.InvalidInput, "cannot read trajectory %s: %v", path, errors.Unwrap(err)).With("field", "trajectory_path")
	}
	var t Trajectory
	if err := json.Unmarshal(b, &t); err != nil || t.Version != 1 {
		return Delegation{}, tools.Errorf(tools.InvalidInput, "%s is not a trajectory written by `git codex delegate export` (version 1)", path).With("field", "trajectory_path")
	}
	d := t.Session
	if d.AgentSessionID == "" || d.Agent == "" {
		return Delegation{}, tools.Errorf(tools.InvalidInput, "trajectory %s names no agent session to resume", path).With("field", "trajectory_path")
	}
	if d.PermissionMode == "" {
		d.PermissionMode = defaultPermissionMode
	}
	if err := checkDelegateOptions(d.Model, d.PermissionMode); err != nil {
		return Delegation{}, err
	}
	return d, nil
}

// SessionIDIn names a delegated session.
type SessionIDIn struct {
	SessionID string `json:"session_id"`
}

// SessionStopped is what interrupt and abort return.
type SessionStopped struct {
	SessionID string `json:"session_id"`
	Status    string `json:"status" jsonschema:"the session's status once its process ended"`
	Message   string `json:"message"`
}

// AgentInterrupt stops a running turn gracefully.
var AgentInterrupt = tools.Define("agent_interrupt", "delegate.interrupt",
	"Gracefully stop a delegated session's running turn: SIGINT to its process group, then wait for it to end (killed after 5 s). "+
		"The turn's caller gets its partial result; the session is INTERRUPTED and may be continued.",
	tools.CLI{Path: "delegate interrupt", Args: []string{"session_id"}},
	func(ctx context.Context, c *tools.Call, in SessionIDIn) (*SessionStopped, error) {
		return stopTurn(c, in.SessionID, "interrupt")
	})

// AgentAbort kills a running turn.
var AgentAbort = tools.Define("agent_abort", "delegate.abort",
	"Forcefully stop a delegated session's running turn: SIGKILL to its whole process group. The session is ABORTED.",
	tools.CLI{Path: "delegate abort", Args: []string{"session_id"}},
	func(ctx context.Context, c *tools.Call, in SessionIDIn) (*SessionStopped, error) {
		return stopTurn(c, in.SessionID, "abort")
	})

// stopTurn records the request to stop (the runner reads it when the
// process ends), then signals the process group after the commit and
// waits until the runner recorded the end.
func stopTurn(c *tools.Call, id, how string) (*SessionStopped, error) {
	d, err := controlled(c, id)
	if err != nil {
		return nil, err
	}
	if d.Status != DelegationRunning {
		return nil, tools.Errorf(tools.SessionNotRunning, "delegated session %s is %s: it has no turn running to %s", id, d.Status, how).With("session_id", id).With("status", d.Status)
	}
	out := &SessionStopped{SessionID: id}
	host, _ := os.Hostname()
	if !c.Repo.WorkHeld(d.workMark()) {
		d.Status, d.StatusReason = DelegationFailed, "its runner died before recording the turn's end"
		out.Status, out.Message = d.Status, fmt.Sprintf("session %s had no live runner: recorded FAILED", id)
		c.Target(id)
		c.Summarize("%s: %s found %s's runner dead", c.Caller.ID, how, id)
		return out, putDelegation(c, &d)
	}
	if d.Host != host {
		return nil, tools.Errorf(tools.InvalidAgentState, "delegated session %s runs on %s; %s it there", id, d.Host, how).With("session_id", id).With("host", d.Host)
	}
	d.Stop = how
	if err := putDelegation(c, &d); err != nil {
		return nil, err
	}
	c.Target(id)
	c.Summarize("%s asked %s to %s", c.Caller.ID, id, how)
	mark := d.workMark()
	c.After(func(ctx context.Context, f *tools.Followup) error {
		gitDir := f.Store.GitDir()
		sig, grace := syscall.SIGINT, stopGrace
		if how == "abort" {
			sig, grace = syscall.SIGKILL, 0
		}
		signalTurn(gitDir, id, sig)
		deadline := time.Now().Add(grace + 10*time.Second)
		killed := how == "abort"
		for f.Store.WorkHeld(mark) && time.Now().Before(deadline) {
			if !killed && time.Now().After(deadline.Add(-10*time.Second)) {
				signalTurn(gitDir, id, syscall.SIGKILL)
				killed = true
			}
			time.Sleep(10 * time.Millisecond)
		}
		var now Delegation
		err := f.Store.View(context.WithoutCancel(ctx), func(sn *gitstate.Snapshot) error {
			return sn.Get(delegationPath(id), &now)
		})
		if err != nil {
			return tools.StoreError(err)
		}
		out.Status = now.Status
		if how == "abort" {
			out.Message = fmt.Sprintf("Aborted session %s", id)
		} else {
			out.Message = fmt.Sprintf("Interrupted session %s", id)
		}
		return nil
	})
	return out, nil
}

// SetModelIn is agent_set_model's input.
type SetModelIn struct {
	SessionID string `json:"session_id"`
	Model     string `json:"model" jsonschema:"e.g. sonnet, opus, haiku"`
}

// SessionChanged is what set_model and set_permission_mode return.
type SessionChanged struct {
	SessionID      string `json:"session_id"`
	Model          string `json:"model,omitempty"`
	PermissionMode string `json:"permission_mode"`
	Message        string `json:"message"`
}

// AgentSetModel changes a session's model for its next turn.
var AgentSetModel = tools.Define("agent_set_model", "delegate.set_model",
	"Change a delegated session's model; its next turn (agent_continue) runs with it.",
	tools.CLI{Path: "delegate set-model", Args: []string{"session_id", "model"}},
	func(ctx context.Context, c *tools.Call, in SetModelIn) (*SessionChanged, error) {
		if in.Model == "" {
			return nil, tools.Errorf(tools.InvalidInput, "model is required (e.g. sonnet, opus, haiku)").With("field", "model")
		}
		return changeSession(c, in.SessionID, func(d *Delegation) error {
			if err := checkDelegateOptions(in.Model, ""); err != nil {
				return err
			}
			d.Model = in.Model
			return nil
		}, "Model changed to "+in.Model)
	})

// SetPermissionModeIn is agent_set_permission_mode's input.
type SetPermissionModeIn struct {
	SessionID string `json:"session_id"`
	Mode      string `json:"mode" jsonschema:"auto, allow or deny"`
}

// AgentSetPermissionMode changes a session's permission mode.
var AgentSetPermissionMode = tools.Define("agent_set_permission_mode", "delegate.set_permission_mode",
	"Change a delegated session's permission mode (auto, allow, deny); its next turn runs with it.",
	tools.CLI{Path: "delegate set-permission-mode", Args: []string{"session_id", "mode"}},
	func(ctx context.Context, c *tools.Call, in SetPermissionModeIn) (*SessionChanged, error) {
		return changeSession(c, in.SessionID, func(d *Delegation) error {
			if in.Mode == "" {
				return tools.Errorf(tools.InvalidInput, "mode is required: auto, allow or deny").With("field", "mode")
			}
			if err := checkDelegateOptions("", in.Mode); err != nil {
				return err
			}
			d.PermissionMode = in.Mode
			return nil
		}, "Permission mode changed to "+in.Mode)
	})

// changeSession applies change to a session the caller controls, checks
// that its agent can still honour it, and records it.
func changeSession(c *tools.Call, id string, change func(*Delegation) error, what string) (*SessionChanged, error) {
	d, err := controlled(c, id)
	if err != nil {
		return nil, err
	}
	if err := change(&d); err != nil {
		return nil, err
	}
	if h, ok := headlessContracts()[d.Agent]; ok {
		if _, err := h.args(turnSpec{Model: d.Model, PermissionMode: d.PermissionMode, MaxTurns: d.MaxTurns, Resume: d.AgentSessionID}); err != nil {
			return nil, err
		}
	}
	c.Target(id)
	msg := what + " for session " + id
	c.Summarize("%s: %s", c.Caller.ID, msg)
	return &SessionChanged{SessionID: id, Model: d.Model, PermissionMode: d.PermissionMode, Message: msg}, putDelegation(c, &d)
}

// DelegateListIn is agent_list_sessions' input.
type DelegateListIn struct {
	Status string `json:"status,omitempty" jsonschema:"only sessions with this status: RUNNING, DONE, INTERRUPTED, ABORTED or FAILED"`
}

// DelegationSummary is one session in a listing.
type DelegationSummary struct {
	SessionID      string    `json:"session_id"`
	Status         string    `json:"status"`
	StatusReason   string    `json:"status_reason,omitempty"`
	Agent          string    `json:"agent"`
	AgentSessionID string    `json:"agent_session_id,omitempty"`
	Model          string    `json:"model,omitempty"`
	PermissionMode string    `json:"permission_mode"`
	Owner          string    `json:"owner"`
	WorkingDir     string    `json:"working_dir"`
	CostUSD        float64   `json:"cost_usd"`
	NumTurns       int       `json:"num_turns"`
	TokensUsed     int       `json:"tokens_used"`
	Prompts        int       `json:"prompts" jsonschema:"the calls that ran a turn (query, continue, resume)"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// DelegationList is agent_list_sessions' output.
type DelegationList struct {
	Sessions []DelegationSummary `json:"sessions"`
}

// AgentListSessions lists the delegated sessions the caller may see.
var AgentListSessions = tools.Define("agent_list_sessions", "delegate.list",
	"List the delegated sessions the caller may see (its own; an agent's supervisor sees its agents'; supervisors and people see all), oldest first, with status, cost and turns.",
	tools.CLI{Path: "delegate list"},
	func(ctx context.Context, c *tools.Call, in DelegateListIn) (DelegationList, error) {
		if in.Status != "" && !slices.Contains([]string{DelegationRunning, DelegationDone, DelegationInterrupted, DelegationAborted, DelegationFailed}, in.Status) {
			return DelegationList{}, tools.Errorf(tools.InvalidInput, "status %q: use RUNNING, DONE, INTERRUPTED, ABORTED or FAILED", in.Status).With("field", "status")
		}
		out := DelegationList{Sessions: []DelegationSummary{}}
		err := tools.WalkJSON(c.Tx, Dir, func(d Delegation) {
			if (in.Status != "" && d.Status != in.Status) || !mayControl(c, d) {
				return
			}
			out.Sessions = append(out.Sessions, DelegationSummary{
				SessionID: d.ID, Status: d.Status, StatusReason: d.StatusReason, Agent: d.Agent, AgentSessionID: d.AgentSessionID, Model: d.Model,
				PermissionMode: d.PermissionMode, Owner: d.Owner, WorkingDir: d.WorkingDir, CostUSD: d.CostUSD, NumTurns: d.NumTurns,
				TokensUsed: d.TokensUsed, Prompts: len(d.Turns), CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
			})
		})
		slices.SortFunc(out.Sessions, func(a, b DelegationSummary) int {
			if a.SessionID < b.SessionID {
				return -1
			}
			return 1
		})
		c.Summarize("%s listed %d delegated session(s)", c.Caller.ID, len(out.Sessions))
		return out, err
	}).Hint(tools.Hints{ReadOnly: true, Idempotent: true})

// ExportTrajectory finds a session the caller may see, for `git codex
// delegate export`, which then writes it with WriteTo: its transcript
// (kept on the machine that ran its turns) is streamed from its file,
// never read whole into memory: a long session's transcript runs to many
// megabytes.
func ExportTrajectory(ctx context.Context, st *gitstate.Store, callerID, id string) (*TrajectoryExport, error) {
	x := &TrajectoryExport{}
	err := st.View(ctx, func(sn *gitstate.Snapshot) error {
		if !delegationIDPattern.MatchString(id) {
			return tools.Errorf(tools.ResourceNotFound, "no delegated session %q; list them with `git codex delegate list`", id).With("session_id", id)
		}
		err := sn.Get(delegationPath(id), &x.Session)
		if errors.Is(err, gitstate.ErrNotFound) {
			return tools.Errorf(tools.ResourceNotFound, "no delegated session %q; list them with `git codex delegate list`", id).With("session_id", id)
		}
		if err != nil {
			return err
		}
		d := x.Session
		if callerID == d.Owner || tools.IsHuman(callerID) {
			return nil
		}
		var a tools.Agent
		if err := sn.Get(tools.AgentPath(callerID), &a); err == nil && a.Type == tools.TypeSupervisor {
			return nil
		}
		var owner tools.Agent
		if err := sn.Get(tools.AgentPath(d.Owner), &owner); err == nil && owner.Supervisor == callerID {
			return nil
		}
		return tools.Errorf(tools.PermissionDenied, "delegated session %s belongs to %s", id, d.Owner).With("session_id", id).With("owner", d.Owner)
	})
	if err != nil {
		return nil, err
	}
	x.transcript = filepath.Join(delegationDir(st.GitDir()), id+".jsonl")
	return x, nil
}

// TrajectoryExport is a session ExportTrajectory found, to write.
type TrajectoryExport struct {
	Session Delegation
	// Messages is how many transcript messages WriteTo wrote.
	Messages   int
	transcript string
}

// WriteTo writes the trajectory as json.MarshalIndent(Trajectory, "",
// "  ") would, byte for byte, reading the transcript one line at a time:
// each valid JSON line is one message, the others (a line the agent CLI
// cut short) are left out.
func (x *TrajectoryExport) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	bw := bufio.NewWriter(cw)
	head, err := json.MarshalIndent(struct {
		Version int        `json:"version"`
		Session Delegation `json:"session"`
	}{1, x.Session}, "", "  ")
	if err != nil {
		return 0, err
	}
	bw.Write(head[:len(head)-2]) // without its closing "\n}"
	bw.WriteString(",\n  \"transcript\": [")
	x.Messages = 0
	f, err := os.Open(x.transcript)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	if f != nil {
		defer f.Close()
		r := bufio.NewReaderSize(f, 64<<10)
		var esc, compact, indented bytes.Buffer
		for {
			line, rerr := r.ReadBytes('\n')
			line = bytes.TrimSuffix(line, []byte("\n"))
			if len(line) > 0 && json.Valid(line) {
				// as MarshalIndent writes a json.RawMessage: HTML
				// characters escaped, compacted, then indented
				esc.Reset()
				compact.Reset()
				indented.Reset()
				json.HTMLEscape(&esc, line)
				if err := json.Compact(&compact, esc.Bytes()); err != nil {
					return cw.n, err
				}
				if x.Messages > 0 {
					bw.WriteByte(',')
				}
				bw.WriteString("\n    ")
				if err := json.Indent(&indented, compact.Bytes(), "    ", "  "); err != nil {
					return cw.n, err
				}
				bw.Write(indented.Bytes())
				x.Messages++
			}
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				return cw.n, fmt.Errorf("read %s: %w", x.transcript, rerr)
			}
		}
	}
	if x.Messages > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("]\n}\n")
	err = bw.Flush()
	return cw.n, err
}

// countingWriter counts what it writes, for WriteTo's answer.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

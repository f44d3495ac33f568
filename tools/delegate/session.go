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

// SessionChanged is what set_model and set_permission_mode return.
type SessionChanged struct {
	SessionID      string `json:"session_id"`
	Model          string `json:"model,omitempty"`
	PermissionMode string `json:"permission_mode"`
	Message        string `json:"message"`
}

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

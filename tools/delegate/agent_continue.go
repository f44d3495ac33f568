package delegate

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/mail"
)

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

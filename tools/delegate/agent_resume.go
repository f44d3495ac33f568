package delegate

import (
	"context"
	"os"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
)

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

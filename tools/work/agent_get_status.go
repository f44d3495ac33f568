package work

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
)

// AgentGetStatusIn is agent_get_status's input: none.
type AgentGetStatusIn struct{}

// AgentGetStatus returns the caller's own record, with its current task
// and epic.
var AgentGetStatus = tools.Define("agent_get_status", "agent.get_status",
	"Get your own agent record: id, type, state (BUSY while you hold a task), your current task and epic, worktree, tmux session, last activity.",
	tools.CLI{Path: "agent status"},
	func(ctx context.Context, c *tools.Call, _ AgentGetStatusIn) (AgentStatus, error) {
		c.Summarize("%s asked for its status", c.Caller.ID)
		a := tools.Agent{ID: c.Caller.ID, Type: tools.TypeHuman, State: tools.StateIdle, CreatedBy: c.Caller.ID} // a person: no record, but a type
		if c.Agent != nil {
			a = *c.Agent
		}
		return agentStatus(c, a)
	}).Hint(tools.Hints{ReadOnly: true, Idempotent: true})

// StateBusy is the state agent_get_status shows for an agent that holds a
// task (seed 003's BUSY); it is derived from the tasks, never stored.
const StateBusy = "BUSY"

// AgentStatus is what agent_get_status returns: the caller's record and
// the work it has now.
type AgentStatus struct {
	tools.Agent
	CurrentTaskID string `json:"current_task_id,omitempty" jsonschema:"the task you hold (IN_PROGRESS first, then REVIEW)"`
	CurrentEpicID string `json:"current_epic_id,omitempty" jsonschema:"your current task's epic, or the newest epic in progress that you run"`
}

// agentStatus fills in a's current task and epic, and shows it BUSY while
// it holds a task.
func agentStatus(c *tools.Call, a tools.Agent) (AgentStatus, error) {
	out := AgentStatus{Agent: a}
	t, ok, err := currentTask(c.Tx, a)
	if err != nil {
		return out, err
	}
	if ok {
		out.CurrentTaskID, out.CurrentEpicID, out.State = t.ID, t.EpicID, StateBusy
	}
	if out.CurrentEpicID == "" {
		e, ok, err := supervisedEpic(c.Tx, a.ID)
		if err != nil {
			return out, err
		}
		if ok {
			out.CurrentEpicID = e.ID
		}
	}
	return out, nil
}

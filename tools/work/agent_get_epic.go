package work

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
)

// AgentGetEpicIn is agent_get_epic's input: none.
type AgentGetEpicIn struct{}

// AgentGetEpic returns the caller's current epic.
var AgentGetEpic = tools.Define("agent_get_epic", "agent.get_epic",
	"Get your current epic: a worker's is its current task's epic; a supervisor's (anyone else's) the newest epic in progress that it runs. "+
		"Fails with INVALID_AGENT_STATE if you have none.",
	tools.CLI{Path: "agent epic"},
	func(ctx context.Context, c *tools.Call, _ AgentGetEpicIn) (Epic, error) {
		var id string
		if c.Caller.Type == tools.TypeWorker {
			t, ok, err := currentTask(c.Tx, *c.Agent)
			if err != nil {
				return Epic{}, err
			}
			if !ok {
				return Epic{}, errNoTask(c)
			}
			if t.EpicID == "" {
				return Epic{}, tools.Errorf(tools.InvalidAgentState, "your task %s belongs to no epic", t.ID).With("agent_id", c.Caller.ID).With("task_id", t.ID)
			}
			id = t.EpicID
		} else {
			e, ok, err := supervisedEpic(c.Tx, c.Caller.ID)
			if err != nil {
				return Epic{}, err
			}
			if !ok {
				return Epic{}, tools.Errorf(tools.InvalidAgentState, "%s runs no epic in progress; create one with `git codex epic create`", c.Caller.ID).With("agent_id", c.Caller.ID)
			}
			id = e.ID
		}
		e, err := getEpic(c.Tx, id)
		if err != nil {
			return Epic{}, err
		}
		c.Target(e.ID)
		c.Summarize("%s looked at its epic %s", c.Caller.ID, e.ID)
		return e, nil
	}).Hint(tools.Hints{ReadOnly: true, Idempotent: true})

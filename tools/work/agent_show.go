package work

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
)

// AgentShowIn is agent_show's input.
type AgentShowIn struct {
	ID string `json:"id" jsonschema:"the agent's id"`
}

// AgentShow returns one agent's record.
var AgentShow = tools.Define("agent_show", "agent.show",
	"Show one registered agent's record.",
	tools.CLI{Path: "agent show", Args: []string{"id"}},
	func(ctx context.Context, c *tools.Call, in AgentShowIn) (tools.Agent, error) {
		c.Target(in.ID)
		c.Summarize("%s looked at %s", c.Caller.ID, in.ID)
		return tools.GetAgent(c.Tx, in.ID)
	}).Hint(tools.Hints{ReadOnly: true, Idempotent: true})

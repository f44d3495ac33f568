package work

import (
	"context"
	"strings"

	"github.com/gitcodex/git-codex/tools"
)

// AgentListIn is agent_list's input.
type AgentListIn struct {
	Type  string `json:"type,omitempty" jsonschema:"only agents of this type"`
	State string `json:"state,omitempty" jsonschema:"only agents in this state"`
}

// AgentList is what agent_list returns, sorted by id.
type AgentList struct {
	Count  int           `json:"count"`
	Agents []tools.Agent `json:"agents"`
}

// AgentListTool lists registered agents.
var AgentListTool = tools.Define("agent_list", "agent.list",
	"List registered agents, optionally only those of one type or state: the view a supervisor needs of its team.",
	tools.CLI{Path: "agent list"},
	func(ctx context.Context, c *tools.Call, in AgentListIn) (AgentList, error) {
		if in.Type != "" {
			if _, err := tools.ParseAgentType(in.Type); err != nil {
				return AgentList{}, err
			}
		}
		out := AgentList{Agents: []tools.Agent{}}
		err := tools.WalkJSON(c.Tx, tools.DirAgents, func(a tools.Agent) {
			if (in.Type == "" || strings.EqualFold(string(a.Type), in.Type)) && (in.State == "" || a.State == in.State) {
				out.Agents = append(out.Agents, a)
			}
		})
		out.Count = len(out.Agents)
		c.Summarize("%s listed %d agent(s)", c.Caller.ID, out.Count)
		return out, err
	}).Hint(tools.Hints{ReadOnly: true, Idempotent: true})

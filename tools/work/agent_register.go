package work

import (
	"context"
	"strings"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
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

// AgentRegisterIn is agent_register's input.
type AgentRegisterIn struct {
	ID         string `json:"id" jsonschema:"new agent's id: letters, digits and ._@+-"`
	Type       string `json:"type" jsonschema:"supervisor, orchestrator, worker, planning, coding or review"`
	Supervisor string `json:"supervisor,omitempty" jsonschema:"id of the agent it reports to"`
}

// AgentRegistered is what agent_register returns: the new record and the
// agent's credential, shown only here.
type AgentRegistered struct {
	tools.Agent
	Token string `json:"token" jsonschema:"the agent's credential: give it to the agent as CODEX_TOKEN; shown only now (the state keeps its hash)"`
}

// AgentRegister registers an agent by hand.
var AgentRegister = tools.Define("agent_register", tools.PermRegisterAgent,
	"Register an agent with a type, so it can call tools as that type (with --as or CODEX_INSTANCE). Returns its credential (token) once: the agent presents it as CODEX_TOKEN, required when auth.agents is required.",
	tools.CLI{Path: "agent add", Args: []string{"id"}},
	func(ctx context.Context, c *tools.Call, in AgentRegisterIn) (AgentRegistered, error) {
		if err := tools.ValidateAgentID(in.ID); err != nil {
			return AgentRegistered{}, err
		}
		t, err := tools.ParseAgentType(in.Type)
		if err != nil {
			return AgentRegistered{}, err
		}
		if t == tools.TypeHuman {
			return AgentRegistered{}, tools.Errorf(tools.InvalidInput, "people are not registered: they act as human:<git user.email>")
		}
		if !instance.MayRegister(c.Caller.Type, t) {
			return AgentRegistered{}, tools.Errorf(tools.PermissionDenied, "a %s agent may register only worker, coding and review agents; ask a supervisor or a person to register a %s", c.Caller.Type, t).
				With("agent_type", string(c.Caller.Type)).With("type", string(t))
		}
		if in.Supervisor != "" {
			if _, err := tools.GetAgent(c.Tx, in.Supervisor); err != nil {
				return AgentRegistered{}, err
			}
		}
		if _, err := c.Tx.Read(tools.AgentPath(in.ID)); err == nil {
			return AgentRegistered{}, tools.Errorf(tools.AlreadyExists, "agent %q already exists; see it with `git codex agent show %s`", in.ID, in.ID).With("agent_id", in.ID)
		}
		now := c.Tx.Now()
		token := tools.NewSecret(tools.PrefixAgentToken)
		a := tools.Agent{
			ID: in.ID, Type: t, State: tools.StateIdle, Supervisor: in.Supervisor,
			CreatedBy: c.Caller.ID, CreatedAt: now, UpdatedAt: now, UpdatedBy: c.Caller.ID,
			TokenHash: tools.HashSecret(token), Clock: c.Tx.Clock(),
		}
		c.Target(a.ID)
		c.Summarize("%s registered %s (%s)", c.Caller.ID, a.ID, a.Type)
		return AgentRegistered{Agent: a, Token: token}, c.Tx.Put(tools.AgentPath(a.ID), a)
	}).Hint(tools.Hints{Additive: true, Idempotent: true})

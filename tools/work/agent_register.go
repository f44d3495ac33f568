package work

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
)

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

package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
)

const dirAgents = "agents"

func agentPath(id string) string { return dirAgents + "/" + id + ".json" }

// agentKind: agents/<id>.json, one per registered agent.
func agentKind() Kind {
	return recordKind(Kind{Name: "agent", Dir: dirAgents, Depth: 1, Kept: true}, func(_ []string, name string, a *Agent) error {
		if a.ID != name || ValidateAgentID(a.ID) != nil {
			return fmt.Errorf("agent record names %q", a.ID)
		}
		if _, err := ParseAgentType(string(a.Type)); err != nil || a.Type == TypeHuman {
			return fmt.Errorf("agent type %q", a.Type)
		}
		return nil
	})
}

// Agent states.
const (
	StateIdle = "idle"
)

// Agent is a registered agent: the record agent_get_status returns.
// Mutable: Clock is the Lamport time of its last change.
type Agent struct {
	ID          string    `json:"id"`
	Type        AgentType `json:"type"`
	State       string    `json:"state"`
	Supervisor  string    `json:"supervisor,omitempty"`
	Worktree    string    `json:"worktree,omitempty"`
	Branch      string    `json:"branch,omitempty"`
	TmuxSession string    `json:"tmux_session,omitempty"`
	// Machine and Host say where an instance runs: its tmux session and
	// worktree exist only there, so only that machine's reap and cleanup
	// judge it. Records made before they were kept have neither.
	Machine string `json:"machine,omitempty" jsonschema:"the machine id (<git dir>/codex/machine) of the repository that spawned it: only there is its session judged"`
	Host    string `json:"host,omitempty" jsonschema:"the host name of the machine that spawned it"`
	// Status, Launcher, BaseCommit and Prompt are an instance's: an agent
	// git codex runs in its worktree and tmux session (see instance.go).
	Status       string     `json:"status,omitempty" jsonschema:"an instance's lifecycle: STARTING, ACTIVE, WAITING_REVIEW, REVIEWING, TERMINATED, ABANDONED, FAILED, COMPLETED"`
	StatusReason string     `json:"status_reason,omitempty" jsonschema:"why the instance ended as it did"`
	Launcher     string     `json:"launcher,omitempty" jsonschema:"the agent CLI it runs"`
	BaseCommit   string     `json:"base_commit,omitempty" jsonschema:"the commit its branch started at"`
	Prompt       string     `json:"prompt,omitempty" jsonschema:"the task it was spawned with"`
	ReviewOf     string     `json:"review_of,omitempty" jsonschema:"for a reviewer: the coding instance it reviews"`
	EndedAt      *time.Time `json:"ended_at,omitempty"`
	Rescued      []string   `json:"rescued,omitempty" jsonschema:"refs under refs/codex/rescue/ where cleanup saved its work"`
	HeldTasks    []string   `json:"held_tasks,omitempty" jsonschema:"tasks it holds and has not finished (see noteHeld)"`
	CleanedAt    *time.Time `json:"cleaned_at,omitempty" jsonschema:"when cleanup removed its session, worktree and branch"`
	CreatedBy    string     `json:"created_by"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
	UpdatedBy    string     `json:"updated_by,omitempty"`
	LastActiveAt *time.Time `json:"last_active_at"`
	// PR is the pull request the agent opened last (create_pull_request).
	PR *PullRequest `json:"pr,omitempty"`
	// TokenHash is the hash of the agent's credential (hashSecret); the
	// credential itself is shown once, to whoever registered it.
	TokenHash string         `json:"token_hash,omitempty"`
	Clock     gitstate.Clock `json:"clock"`
}

// getAgent reads an agent's record, or fails with AGENT_NOT_FOUND.
func getAgent(tx *gitstate.Tx, id string) (Agent, error) {
	if err := ValidateAgentID(id); err != nil {
		return Agent{}, Errorf(AgentNotFound, "no agent %q; list agents with `git codex agent list`", id).With("agent_id", id)
	}
	var a Agent
	err := tx.Get(agentPath(id), &a)
	if errors.Is(err, gitstate.ErrNotFound) {
		return Agent{}, Errorf(AgentNotFound, "no agent %q; list agents with `git codex agent list`", id).With("agent_id", id)
	}
	return a, err
}

// AgentGetStatusIn is agent_get_status's input: none.
type AgentGetStatusIn struct{}

// AgentGetStatus returns the caller's own record, with its current task
// and epic.
var AgentGetStatus = Define("agent_get_status", "agent.get_status",
	"Get your own agent record: id, type, state (BUSY while you hold a task), your current task and epic, worktree, tmux session, last activity.",
	CLI{Path: "agent status"},
	func(ctx context.Context, c *Call, _ AgentGetStatusIn) (AgentStatus, error) {
		c.Summarize("%s asked for its status", c.Caller.ID)
		a := Agent{ID: c.Caller.ID, Type: TypeHuman, State: StateIdle, CreatedBy: c.Caller.ID} // a person: no record, but a type
		if c.Agent != nil {
			a = *c.Agent
		}
		return agentStatus(c, a)
	}).Hint(Hints{ReadOnly: true, Idempotent: true})

// AgentListIn is agent_list's input.
type AgentListIn struct {
	Type  string `json:"type,omitempty" jsonschema:"only agents of this type"`
	State string `json:"state,omitempty" jsonschema:"only agents in this state"`
}

// AgentList is what agent_list returns, sorted by id.
type AgentList struct {
	Count  int     `json:"count"`
	Agents []Agent `json:"agents"`
}

// AgentListTool lists registered agents.
var AgentListTool = Define("agent_list", "agent.list",
	"List registered agents, optionally only those of one type or state: the view a supervisor needs of its team.",
	CLI{Path: "agent list"},
	func(ctx context.Context, c *Call, in AgentListIn) (AgentList, error) {
		if in.Type != "" {
			if _, err := ParseAgentType(in.Type); err != nil {
				return AgentList{}, err
			}
		}
		out := AgentList{Agents: []Agent{}}
		err := walkJSON(c.Tx, dirAgents, func(a Agent) {
			if (in.Type == "" || strings.EqualFold(string(a.Type), in.Type)) && (in.State == "" || a.State == in.State) {
				out.Agents = append(out.Agents, a)
			}
		})
		out.Count = len(out.Agents)
		c.Summarize("%s listed %d agent(s)", c.Caller.ID, out.Count)
		return out, err
	}).Hint(Hints{ReadOnly: true, Idempotent: true})

// AgentShowIn is agent_show's input.
type AgentShowIn struct {
	ID string `json:"id" jsonschema:"the agent's id"`
}

// AgentShow returns one agent's record.
var AgentShow = Define("agent_show", "agent.show",
	"Show one registered agent's record.",
	CLI{Path: "agent show", Args: []string{"id"}},
	func(ctx context.Context, c *Call, in AgentShowIn) (Agent, error) {
		c.Target(in.ID)
		c.Summarize("%s looked at %s", c.Caller.ID, in.ID)
		return getAgent(c.Tx, in.ID)
	}).Hint(Hints{ReadOnly: true, Idempotent: true})

// AgentRegisterIn is agent_register's input.
type AgentRegisterIn struct {
	ID         string `json:"id" jsonschema:"new agent's id: letters, digits and ._@+-"`
	Type       string `json:"type" jsonschema:"supervisor, orchestrator, worker, planning, coding or review"`
	Supervisor string `json:"supervisor,omitempty" jsonschema:"id of the agent it reports to"`
}

// AgentRegistered is what agent_register returns: the new record and the
// agent's credential, shown only here.
type AgentRegistered struct {
	Agent
	Token string `json:"token" jsonschema:"the agent's credential: give it to the agent as CODEX_TOKEN; shown only now (the state keeps its hash)"`
}

// AgentRegister registers an agent by hand.
var AgentRegister = Define("agent_register", "agent.register",
	"Register an agent with a type, so it can call tools as that type (with --as or CODEX_INSTANCE). Returns its credential (token) once: the agent presents it as CODEX_TOKEN, required when auth.agents is required.",
	CLI{Path: "agent add", Args: []string{"id"}},
	func(ctx context.Context, c *Call, in AgentRegisterIn) (AgentRegistered, error) {
		if err := ValidateAgentID(in.ID); err != nil {
			return AgentRegistered{}, err
		}
		t, err := ParseAgentType(in.Type)
		if err != nil {
			return AgentRegistered{}, err
		}
		if t == TypeHuman {
			return AgentRegistered{}, Errorf(InvalidInput, "people are not registered: they act as human:<git user.email>")
		}
		if !mayRegister(c.Caller.Type, t) {
			return AgentRegistered{}, Errorf(PermissionDenied, "a %s agent may register only worker, coding and review agents; ask a supervisor or a person to register a %s", c.Caller.Type, t).
				With("agent_type", string(c.Caller.Type)).With("type", string(t))
		}
		if in.Supervisor != "" {
			if _, err := getAgent(c.Tx, in.Supervisor); err != nil {
				return AgentRegistered{}, err
			}
		}
		if _, err := c.Tx.Read(agentPath(in.ID)); err == nil {
			return AgentRegistered{}, Errorf(AlreadyExists, "agent %q already exists; see it with `git codex agent show %s`", in.ID, in.ID).With("agent_id", in.ID)
		}
		now := c.Tx.Now()
		token := newSecret(prefixAgentToken)
		a := Agent{
			ID: in.ID, Type: t, State: StateIdle, Supervisor: in.Supervisor,
			CreatedBy: c.Caller.ID, CreatedAt: now, UpdatedAt: now, UpdatedBy: c.Caller.ID,
			TokenHash: hashSecret(token), Clock: c.Tx.Clock(),
		}
		c.Target(a.ID)
		c.Summarize("%s registered %s (%s)", c.Caller.ID, a.ID, a.Type)
		return AgentRegistered{Agent: a, Token: token}, c.Tx.Put(agentPath(a.ID), a)
	}).Hint(Hints{Additive: true, Idempotent: true})

// mayRegister keeps agent.register from granting more than the caller has:
// only people and supervisors create the types that may manage agents
// (supervisor, orchestrator, planning); anyone else allowed agent.register
// creates workers, coders and reviewers.
func mayRegister(caller, t AgentType) bool {
	switch caller {
	case TypeHuman, TypeSupervisor:
		return true
	}
	return t == TypeWorker || t == TypeCoding || t == TypeReview
}

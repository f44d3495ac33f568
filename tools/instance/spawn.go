package instance

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/gitcodex/git-codex/tools"
)

// SpawnIn is spawn's input.
type SpawnIn struct {
	Type   string `json:"type" jsonschema:"agent type: planning, coding, review, worker, supervisor or orchestrator"`
	Prompt string `text:"multiline" json:"prompt" jsonschema:"what the agent is to do"`
	Agent  string `json:"agent,omitempty" jsonschema:"claude, codex, gemini or another agent.<name>.command (default agent.default)"`
	From   string `json:"from,omitempty" jsonschema:"revision (default HEAD)"`
	Name   string `json:"name,omitempty" jsonschema:"instance id (default: from its type); names branch codex/<id>, so a ref name without dots"`
	// StartTimeout bounds the wait for the agent to connect.
	StartTimeout int `json:"start_timeout,omitempty" jsonschema:"seconds to connect before FAILED (default instance.start_timeout)"`
}

// Spawned is what spawn returns.
type Spawned struct {
	InstanceID   string `json:"instance_id"`
	Type         string `json:"type"`
	Status       string `json:"status"`
	Agent        string `json:"agent" jsonschema:"the launcher"`
	Branch       string `json:"branch"`
	BaseCommit   string `json:"base_commit"`
	WorktreePath string `json:"worktree_path"`
	SessionName  string `json:"session_name"`
	Error        string `json:"error,omitempty" jsonschema:"why the instance FAILED to start"`
}

// SpawnTool starts an agent instance in its own worktree and tmux session.
var SpawnTool = tools.Define("spawn", "instance.spawn",
	"Spawn an agent instance: its own branch, worktree and tmux session running the agent CLI with the prompt, connected to git codex as that instance.",
	tools.CLI{Path: "spawn", Args: []string{"type", "prompt"}, Envelope: true},
	func(ctx context.Context, c *tools.Call, in SpawnIn) (*Spawned, error) {
		return Spawn(ctx, c, in, nil)
	})

// Spawn records a new instance (STARTING) and, after the commit,
// makes its worktree and session (Start). onFail, if set, is
// recorded with a start that fails (a task's worker gives its task back).
func Spawn(ctx context.Context, c *tools.Call, in SpawnIn, onFail func(*tools.Call) error) (*Spawned, error) {
	t, err := tools.ParseAgentType(in.Type)
	if err != nil {
		return nil, err
	}
	if t == tools.TypeHuman {
		return nil, tools.Errorf(tools.InvalidInput, "people are not spawned; spawn one of planning, coding, review, worker, supervisor, orchestrator")
	}
	if !MayRegister(c.Caller.Type, t) {
		return nil, tools.Errorf(tools.PermissionDenied, "a %s agent may spawn only worker, coding and review agents", c.Caller.Type).With("type", string(t))
	}
	if strings.TrimSpace(in.Prompt) == "" {
		return nil, tools.Errorf(tools.InvalidInput, "give the instance its task: a non-empty prompt").With("field", "prompt")
	}
	if limit := c.Config.IntValue("mail.max_body_bytes"); len(in.Prompt) > limit {
		return nil, tools.Errorf(tools.InvalidInput, "prompt is %d bytes; the limit is %d (config mail.max_body_bytes)", len(in.Prompt), limit).With("field", "prompt")
	}
	l, err := LauncherFor(c.Config, in.Agent)
	if err != nil {
		return nil, err
	}
	timeout, err := StartTimeout(c.Config, in.StartTimeout)
	if err != nil {
		return nil, err
	}
	if err := l.CheckProgram(exec.LookPath); err != nil {
		return nil, err
	}
	from := in.From
	if from == "" {
		from = "HEAD"
	}
	base, err := c.Repo.RevParse(ctx, from)
	if err != nil {
		return nil, tools.Errorf(tools.InvalidInput, "--from %q names no commit in this repository", from).With("from", from)
	}
	id := in.Name
	if id == "" {
		id = NewID(t, c.Tx.Now())
	}
	if err := ValidateInstanceID(id); err != nil {
		return nil, err
	}
	if _, err := c.Tx.Read(tools.AgentPath(id)); err == nil {
		return nil, tools.Errorf(tools.AlreadyExists, "agent %q already exists; pick another --name", id).With("agent_id", id)
	}
	out := &Spawned{
		InstanceID: id, Type: string(t), Status: tools.StatusStarting, Agent: l.Name, Branch: BranchName(id), BaseCommit: base,
		WorktreePath: filepath.Join(WorktreeDir(c), id), SessionName: SessionName(id),
	}
	if c.Repo.BranchExists(ctx, out.Branch) {
		return nil, tools.Errorf(tools.AlreadyExists, "branch %s already exists; pick another --name, or delete the branch", out.Branch).With("branch", out.Branch)
	}
	if _, err := os.Stat(out.WorktreePath); err == nil {
		return nil, tools.Errorf(tools.AlreadyExists, "%s already exists; pick another --name, or remove it", out.WorktreePath).With("worktree_path", out.WorktreePath)
	}
	// held until the outcome is recorded: a spawn that dies midway
	// leaves an instance STARTING whose mark nobody holds (reap)
	release, err := c.Repo.HoldWork(id)
	if err != nil {
		return nil, tools.Errorf(tools.AlreadyExists, "instance %q is being made by another call", id).With("agent_id", id)
	}
	c.Tx.OnAbort(func(context.Context) error { release(); return nil })
	machine, host, err := MachineHere(c)
	if err != nil {
		return nil, err
	}
	now := c.Tx.Now()
	// the instance's credential: in its environment and MCP config
	// only (files git ignores), its hash in the state
	token := tools.NewSecret(tools.PrefixAgentToken)
	a := tools.Agent{
		ID: id, Type: t, State: tools.StateIdle, Status: tools.StatusStarting, Supervisor: supervisorOf(c),
		Worktree: out.WorktreePath, Branch: out.Branch, TmuxSession: out.SessionName, Machine: machine, Host: host, Launcher: l.Name, BaseCommit: base, Prompt: in.Prompt,
		CreatedBy: c.Caller.ID, CreatedAt: now, UpdatedAt: now, UpdatedBy: c.Caller.ID, TokenHash: tools.HashSecret(token), Clock: c.Tx.Clock(),
	}
	if err := c.Tx.Put(tools.AgentPath(id), a); err != nil {
		return nil, err
	}
	c.Target(id)
	c.Summarize("%s spawned %s (%s, %s)", c.Caller.ID, id, t, l.Name)
	c.After(func(ctx context.Context, f *tools.Followup) error {
		defer release()
		return Start(ctx, f, a, token, l, firstPrompt(f.Store.WorkDir(), a), tools.StatusActive, timeout, out, onFail)
	})
	return out, nil
}

// supervisorOf is who an instance a caller spawns reports to: the calling
// agent, if it is one.
func supervisorOf(c *tools.Call) string {
	if c.Agent != nil {
		return c.Agent.ID
	}
	return ""
}

package instance

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
)

// InstanceIDIn names one instance.
type InstanceIDIn struct {
	ID string `json:"id" jsonschema:"the instance's id"`
}

// Ended is what kill and abandon return.
type Ended struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	// Session says what became of the tmux session: killed, or gone.
	Session string `json:"session"`
}

// InstanceKill stops an instance: TERMINATED, its session killed.
var InstanceKill = tools.Define("instance_kill", "instance.kill",
	"Stop an instance: it becomes TERMINATED and its tmux session is killed. Its worktree and branch stay until `git codex cleanup`, which saves any work in them first.",
	tools.CLI{Path: "kill", Args: []string{"id"}},
	func(ctx context.Context, c *tools.Call, in InstanceIDIn) (*Ended, error) {
		return endInstance(c, in.ID, tools.StatusTerminated, "killed by "+c.Caller.ID)
	})

// endInstance records an instance's end, then (after the commit: a kill
// cannot be undone) kills its session.
func endInstance(c *tools.Call, id, status, reason string) (*Ended, error) {
	a, err := getInstance(c, id)
	if err != nil {
		return nil, err
	}
	verb := "kill"
	if status == tools.StatusAbandoned {
		verb = "abandon"
	}
	if err := refuseElsewhereCall(c, a, verb); err != nil {
		return nil, err
	}
	if Final(a.Status) {
		return nil, tools.Errorf(tools.InvalidAgentState, "%s has already ended (%s)", a.ID, a.Status).With("agent_id", a.ID).With("status", a.Status)
	}
	if err := SetStatus(c, &a, status, reason); err != nil {
		return nil, err
	}
	c.Target(a.ID)
	c.Summarize("%s ended %s: %s", c.Caller.ID, a.ID, status)
	out := &Ended{ID: a.ID, Status: status}
	tm := Tmux(c.Config, c.Env)
	c.After(func(ctx context.Context, f *tools.Followup) error {
		out.Session = killInstanceSession(ctx, f.Store, tm, a)
		return nil
	})
	return out, nil
}

package instance

import (
	"context"

	"github.com/gitcodex/git-codex/tmux"
	"github.com/gitcodex/git-codex/tools"
)

// View is one instance as ps shows it: its record and the live
// state of its session.
type View struct {
	tools.Agent
	Live           string `json:"live" jsonschema:"running, dead, missing, elsewhere (another machine runs it: see host), or - for an instance that ended and was cleaned up"`
	PaneExitStatus *int   `json:"pane_exit_status,omitempty"`
}

// InstanceList is what ps returns, sorted by id.
type InstanceList struct {
	Count     int    `json:"count"`
	Instances []View `json:"instances"`
}

// InstanceListIn is ps's input.
type InstanceListIn struct {
	All bool `json:"all,omitempty" jsonschema:"also instances that ended and were cleaned up"`
}

// InstanceListTool lists instances with the live state of their sessions.
var InstanceListTool = tools.Define("instance_list", "instance.list",
	"List the agent instances git codex runs, with their status, branch, worktree and whether their tmux session is running, dead or missing (elsewhere: another machine runs it).",
	tools.CLI{Path: "ps"},
	func(ctx context.Context, c *tools.Call, in InstanceListIn) (*InstanceList, error) {
		out := &InstanceList{Instances: []View{}}
		err := tools.WalkJSON(c.Tx, tools.DirAgents, func(a tools.Agent) {
			if a.Status != "" && (in.All || a.CleanedAt == nil) {
				out.Instances = append(out.Instances, View{Agent: a, Live: LiveNone})
			}
		})
		if err != nil {
			return nil, err
		}
		out.Count = len(out.Instances)
		machine, err := c.Repo.MachineID()
		if err != nil {
			return nil, err
		}
		c.Summarize("%s listed %d instance(s)", c.Caller.ID, out.Count)
		tm := Tmux(c.Config, c.Env)
		c.After(func(ctx context.Context, f *tools.Followup) error {
			return fillLive(ctx, tm, machine, out.Instances)
		})
		return out, nil
	}).Hint(tools.Hints{ReadOnly: true, Idempotent: true})

// fillLive sets the live state of each instance from one listing of the
// tmux server (outside the writer lock). An instance of another machine
// than this repository's (machine) is elsewhere, whatever this machine's
// tmux server holds: a session of the same name here is not its.
func fillLive(ctx context.Context, tm tmux.Runner, machine string, views []View) error {
	sessions, err := tm.List(ctx)
	if err != nil {
		return tools.Errorf(tools.InternalError, "list tmux sessions: %v", err)
	}
	byName := map[string]tmux.Session{}
	for _, s := range sessions {
		byName[s.Name] = s
	}
	for i := range views {
		v := &views[i]
		s, ok := byName[v.TmuxSession]
		switch {
		case v.CleanedAt == nil && RunsElsewhere(v.Agent, machine):
			v.Live = LiveElsewhere
		case ok && s.PaneDead:
			v.Live = LiveDead
			if s.PaneExitStatus >= 0 {
				v.PaneExitStatus = &s.PaneExitStatus
			}
		case ok:
			v.Live = LiveRunning
		case v.CleanedAt == nil:
			v.Live = LiveMissing
		}
	}
	return nil
}

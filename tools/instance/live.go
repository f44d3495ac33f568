package instance

import (
	"context"
	"sort"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
)

// LiveInstances reads every instance in the snapshot (every agent git codex
// runs, ended and cleaned-up ones too) with the live state of its tmux
// session, as ps shows them, but without a tool call: a reader such as the
// web page looks again after every commit, and a look that committed an
// audit record would itself be a commit to look at. Registered agents that
// git codex does not run come back too, with Live empty. Sorted by id.
// machine is this repository's machine id: another machine's instances
// are elsewhere, not missing.
func LiveInstances(ctx context.Context, sn *gitstate.Snapshot, keys *tools.ConfigKeys, env tools.Env, machine string) ([]View, error) {
	var views, running []View
	err := tools.WalkSnapshot(sn, tools.DirAgents, func(a tools.Agent) {
		if a.Status == "" {
			views = append(views, View{Agent: a})
			return
		}
		running = append(running, View{Agent: a, Live: LiveNone})
	})
	if err != nil {
		return nil, err
	}
	if len(running) > 0 {
		cfg, err := tools.LoadConfig(sn, keys)
		if err != nil {
			return nil, err
		}
		if err := fillLive(ctx, Tmux(cfg, env), machine, running); err != nil {
			// No tmux server (or no tmux at all) means no session runs:
			// fillLive's own answer for a server without them.
			for i := range running {
				switch {
				case running[i].CleanedAt != nil:
				case RunsElsewhere(running[i].Agent, machine):
					running[i].Live = LiveElsewhere
				default:
					running[i].Live = LiveMissing
				}
			}
		}
	}
	views = append(views, running...)
	sort.Slice(views, func(i, j int) bool { return views[i].ID < views[j].ID })
	return views, nil
}

// ReviewLimit is the review.max_iterations in force in the snapshot: how
// many reviews a coder may ask for.
func ReviewLimit(sn *gitstate.Snapshot, keys *tools.ConfigKeys) (int, error) {
	cfg, err := tools.LoadConfig(sn, keys)
	if err != nil {
		return 0, err
	}
	return cfg.IntValue("review.max_iterations"), nil
}

// Live states of an instance's tmux session, as ps shows them.
const (
	LiveRunning = "running" // the session's pane runs the agent
	LiveDead    = "dead"    // the pane's process exited; the session stays for a look
	LiveMissing = "missing" // no such session (killed, or its tmux server is gone)
	LiveNone    = "-"       // ended and cleaned up: nothing should run
	// LiveElsewhere: another machine runs it (its host is the record's);
	// no session here says anything of it.
	LiveElsewhere = "elsewhere"
)

// Package instance is the agents git codex runs: an instance is an agent
// record with a status, its own branch and worktree, and a tmux session
// running an agent CLI through its launcher (agent.<name>.command). It
// holds spawn and the instance_* tools (one file per tool), the launchers
// and their spawn lines, the start and its checks, what a pane shows
// (screens), nudging an instance, its liveness on this machine, and
// cleanup and reap; and the instance.* and agent.* settings.
//
// The nouns above it (review, the task worker, wake and
// watch in tools/work; delegation in tools/delegate) use what it exports: Spawn and Start, SetStatus,
// Nudge, Tmux, SessionName, LauncherFor, Transcript, Final, ... What it
// must ask of them goes through the pipeline's hooks: AgentEnded (a
// reviewer's active review is let go when it ends) and Reapers (reap
// sweeps the delegated sessions whose runner died).
package instance

import "github.com/gitcodex/git-codex/tools"

// Catalog is what this package adds to git codex: its tools, its step in
// the call pipeline (an instance's first call marks it running), and its
// config keys, for the assembly (tools/builtin). A fresh value on every
// call.
func Catalog() tools.Catalog {
	return tools.Catalog{
		Tools: []*tools.Tool{
			SpawnTool, InstanceListTool, InstancePeek, InstanceSend, InstanceKill, InstanceAbandon, InstanceCleanup, InstanceReap, AgentSetStatus,
		},
		Hooks:       tools.Hooks{BeforeHandler: []func(c *tools.Call) error{markRunning}},
		ConfigKeys:  instanceKeys(),
		KeyPatterns: []func(name string) (tools.ConfigKey, bool){launcherKey},
	}
}

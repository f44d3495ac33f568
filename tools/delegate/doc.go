// Package delegate is delegation (docs/DELEGATION.md): an agent CLI run
// headless, one turn per call, under a session record (Delegation) that
// agent_query starts and agent_continue, agent_resume, agent_interrupt,
// agent_abort, agent_set_model and agent_set_permission_mode control;
// the headless contracts of the built-in CLIs (headless.go), the turn's
// runner and what it keeps of their output, and the delegate.* settings.
// It sits above tools/instance, whose launchers (agent.<name>.command)
// it shares; reap reaches its sessions whose runner died through the
// Reapers hook (reapDelegations).
package delegate

import "github.com/gitcodex/git-codex/tools"

// Catalog is what this package adds to git codex: its tools, its reaper,
// its record kind and its config keys, for the assembly (tools/builtin).
// A fresh value on every call.
func Catalog() tools.Catalog {
	return tools.Catalog{
		Tools: []*tools.Tool{
			AgentListSessions, AgentQuery, AgentQueryStream, AgentContinue, AgentResume, AgentInterrupt, AgentAbort, AgentSetModel, AgentSetPermissionMode,
		},
		Hooks: tools.Hooks{
			Reapers:     []func(c *tools.Call, dryRun bool) ([]string, error){reapDelegations},
			UnknownTool: []func(string) *tools.Error{tools.Renamed(seedToolNames)},
		},
		Kinds:      []tools.Kind{delegationKind()},
		ConfigKeys: delegateKeys(),
	}
}

// seedToolNames are seed 002's names of this package's tools: its
// claude_* tools delegate to any agent CLI here, so they are agent_*.
var seedToolNames = map[string]string{
	"claude_query": "agent_query", "claude_query_stream": "agent_query_stream", "claude_continue": "agent_continue",
	"claude_resume": "agent_resume", "claude_interrupt": "agent_interrupt", "claude_abort": "agent_abort",
	"claude_set_model": "agent_set_model", "claude_set_permission_mode": "agent_set_permission_mode",
}

package tools

import (
	"errors"

	"github.com/gitcodex/git-codex/gitstate"
)

// An agent pays for every tool tools/list shows it in every turn: its
// name, description and input schema go to the model (Codex and Gemini
// send them all; Claude Code sends the names and loads one when the
// model searches for it). So each agent type is shown up front only the
// tools its kind of work uses; the rest of what its policy permits stays
// one step away, through the MCP adapter's tool_find and tool_call
// (cmd/git-codex/mcpserver/more.go), whose description names every one of
// them. Nothing is taken away: the policy alone decides what a caller may
// call, and a call of a tool that is not listed goes through the registry
// like any other.

// deferredNames are, per agent type, the names (globs) of the tools
// tools/list leaves to tool_find/tool_call: seed 001's handoff cycles
// (used by the agents bound to a cycle's roles), the management of
// delegated sessions, the prompt registry beyond its search, and
// maintenance (credentials, conflicts sync settled, retries of GitHub
// calls, cleaning up instances, changing settings). Workers, coders and
// reviewers also reach delegation itself this way; supervisors,
// orchestrators and planners keep agent_query up front. People see
// everything: they chose their client.
func deferredNames(t AgentType) []string {
	rare := []string{"cycle_*", "session_open", "handoff_*", "prompt_describe", "prompt_execute", "prompt_reload",
		"agent_rotate_token", "conflict_list", "github_retry",
		"agent_query_stream", "agent_continue", "agent_resume", "agent_interrupt", "agent_abort",
		"agent_set_model", "agent_set_permission_mode", "agent_list_sessions"}
	switch t {
	case TypeHuman:
		return nil
	case TypeWorker, TypeCoding, TypeReview:
		return append(rare, "agent_query")
	default: // supervisors, orchestrators, planners
		return append(rare, "config_set", "config_unset", "config_reset", "config_list", "instance_reap", "instance_cleanup")
	}
}

// Deferred reports whether tools/list leaves the named tool to
// tool_find/tool_call for callers of type t.
func Deferred(t AgentType, name string) bool {
	return matchAny(deferredNames(t), name)
}

// Listing splits the tools the caller may use (Permitted) into those
// tools/list shows up front and the deferred ones, both sorted by name.
func (r *Registry) Listing(sn *gitstate.Snapshot, callerID string) (listed, deferred []*Tool, err error) {
	permitted, err := r.Permitted(sn, callerID)
	if err != nil || len(permitted) == 0 {
		return permitted, nil, err
	}
	typ := TypeHuman
	if !IsHuman(callerID) {
		var a Agent
		if err := sn.Get(AgentPath(callerID), &a); err != nil && !errors.Is(err, gitstate.ErrNotFound) {
			return nil, nil, err
		}
		typ = a.Type
	}
	for _, t := range permitted {
		if Deferred(typ, t.Name) {
			deferred = append(deferred, t)
		} else {
			listed = append(listed, t)
		}
	}
	return listed, deferred, nil
}

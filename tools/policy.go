package tools

import (
	"fmt"
	"path"
)

// defaultPolicy is seed 003's permission table, carried over to git codex's
// permission keys ("mail.send", "agent.list", ...) and extended to seed
// 000's planning, coding and review agents: coding agents request reviews
// and open pull requests, reviewers send feedback or approve by opening their coder's pull request,
// planning agents file issues and open pull requests. Globs use path.Match: "*"
// matches any run of characters. Deny wins over allow. The policy lives in
// the state's config (keys policy.<type>.allow and policy.<type>.deny), so
// `git codex config set` changes it and the change is audited like any call.
// Every type may use the prompt registry ("prompt.*"): it only reads.
// Every type may sync ("state.sync", entry.go): it brings what peers
// recorded; init and restore ("state.init", "state.restore") are for
// people and supervisors.
// Delegation ("delegate.*", seed 002) is for the agents that hand out or
// do work: orchestrators, planners, workers and coders delegate a focused
// job to a fresh agent CLI; reviewers review and do not.
func defaultPolicy() map[AgentType]rule {
	return map[AgentType]rule{
		TypeSupervisor: {allow: []string{"*"}},
		TypeHuman:      {allow: []string{"*"}},
		TypeOrchestrator: {
			allow: []string{"mail.*", "agent.*", "system.*", "task.*", "epic.*", "lock.*", "conflict.*", "instance.*", "prompt.*", "session.*", "cycle.*", "handoff.*", "delegate.*", "state.sync"},
			deny:  []string{"supervisor.*"},
		},
		TypeWorker: {
			allow: []string{"mail.*", "agent.get_status", "agent.set_status", "agent.get_task", "agent.get_epic",
				"system.log_decision", "system.read_decisions", "task.update_status", "task.add_comment",
				"task.list", "task.show", "task.claim", "task.release", "lock.*", "conflict.list", "prompt.*",
				"agent.rotate_token", "session.*", "cycle.*", "handoff.*", "github.create_pull_request", "delegate.*", "state.sync"},
			deny: []string{"supervisor.*", "orchestrator.*", "epic.*", "task.create", "task.assign"},
		},
		TypePlanning: {
			allow: []string{"mail.*", "agent.*", "system.*", "task.*", "epic.*", "lock.*", "conflict.*", "instance.list", "instance.peek",
				"github.create_issues", "github.create_pull_request", "github.retry", "prompt.*", "session.*", "cycle.*", "handoff.*", "delegate.*", "state.sync"},
			deny: []string{"supervisor.*"},
		},
		TypeCoding: {
			allow: []string{"mail.*", "agent.get_status", "agent.set_status", "system.log_decision", "system.read_decisions", "review.request", "github.*",
				"task.list", "task.show", "task.claim", "task.release", "task.update_status", "lock.*", "conflict.list", "prompt.*",
				"agent.rotate_token", "session.*", "cycle.*", "handoff.*", "delegate.*", "state.sync"},
			deny: []string{"supervisor.*", "orchestrator.*"},
		},
		TypeReview: {
			allow: []string{"mail.*", "agent.get_status", "agent.set_status", "system.log_decision", "system.read_decisions", "review.send_feedback", "github.create_pull_request", "github.retry",
				"task.list", "task.show", "lock.*", "conflict.list", "prompt.*",
				"agent.rotate_token", "session.*", "cycle.*", "handoff.*", "state.sync"},
			deny: []string{"supervisor.*", "orchestrator.*"},
		},
	}
}

// permResetConfig is the permission of config_reset: people hold it
// whatever the policy says, so a policy that shuts everyone out (set by
// hand, or arrived by sync from a peer) always has a way back.
const permResetConfig = "config.reset"

// permSetConfig is config_set's permission, the one people must keep.
const permSetConfig = "config.set"

// permitted is the registry's permission check: the caller's type passes
// the policy in force, or the caller is a person resetting config or
// restoring the state (the ways back, whatever the policy says).
func permitted(cfg *Config, t AgentType, permission string) bool {
	return Allows(cfg, t, permission)
}

// Allows reports whether the settings cfg let an agent of type t use the
// tools of a permission (people may always reset config and restore).
func Allows(cfg *Config, t AgentType, permission string) bool {
	if t == TypeHuman && (permission == permResetConfig || permission == permRestore) {
		return true
	}
	return cfg.rule(t).permits(permission)
}

// lockedOut says why a config would leave no person able to change config
// (as config_set does), or "" if people still can.
func lockedOut(cfg *Config) string {
	if cfg.rule(TypeHuman).permits(permSetConfig) {
		return ""
	}
	return fmt.Sprintf("no person could change config any more (policy.human.allow must match %s and policy.human.deny must not)", permSetConfig)
}

type rule struct {
	allow, deny []string
}

// permits reports whether the permission key passes the rule: some allow
// glob matches it and no deny glob does.
func (r rule) permits(key string) bool {
	return matchAny(r.allow, key) && !matchAny(r.deny, key)
}

func matchAny(globs []string, key string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, key); ok {
			return true
		}
	}
	return false
}

// checkGlob reports a malformed glob before it is stored.
func checkGlob(glob string) error {
	if glob == "" {
		return path.ErrBadPattern
	}
	_, err := path.Match(glob, "")
	return err
}

// policyKeys are the permission policy's settings: an allow and a deny
// list per agent type, defaulting to defaultPolicy.
func policyKeys() []ConfigKey {
	var keys []ConfigKey
	pol := defaultPolicy()
	for _, t := range AgentTypes() {
		r := pol[t]
		keys = append(keys,
			ConfigKey{Name: "policy." + string(t) + ".allow", Kind: "list", Default: nonNil(r.allow), Doc: "permission globs " + string(t) + " callers may use"},
			ConfigKey{Name: "policy." + string(t) + ".deny", Kind: "list", Default: nonNil(r.deny), Doc: "permission globs denied to " + string(t) + " callers, even when allowed"})
	}
	return keys
}

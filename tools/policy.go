package tools

import "path"

// defaultPolicy is seed 003's permission table, carried over to git codex's
// permission keys ("mail.send", "agent.list", ...) and extended to seed
// 000's planning, coding and review agents: coding agents request reviews
// and open pull requests, reviewers send feedback and open pull requests,
// planning agents file issues and open pull requests. Globs use path.Match: "*"
// matches any run of characters. Deny wins over allow. The policy lives in
// the state's config (keys policy.<type>.allow and policy.<type>.deny), so
// `git codex config set` changes it and the change is audited like any call.
func defaultPolicy() map[AgentType]rule {
	return map[AgentType]rule{
		TypeSupervisor: {allow: []string{"*"}},
		TypeHuman:      {allow: []string{"*"}},
		TypeOrchestrator: {
			allow: []string{"mail.*", "agent.*", "system.*", "task.*", "epic.*", "lock.*", "conflict.*", "instance.*", "session.*", "cycle.*", "handoff.*"},
			deny:  []string{"supervisor.*"},
		},
		TypeWorker: {
			allow: []string{"mail.*", "agent.get_status", "agent.get_task", "agent.get_epic",
				"system.log_decision", "task.update_status", "task.add_comment",
				"task.list", "task.show", "task.claim", "task.release", "lock.*", "conflict.list",
				"agent.rotate_token", "session.*", "cycle.*", "handoff.*"},
			deny: []string{"supervisor.*", "orchestrator.*", "epic.*", "task.create", "task.assign"},
		},
		TypePlanning: {
			allow: []string{"mail.*", "agent.*", "system.*", "task.*", "epic.*", "lock.*", "conflict.*", "instance.list", "instance.peek",
				"github.create_issues", "github.create_pull_request", "session.*", "cycle.*", "handoff.*"},
			deny: []string{"supervisor.*"},
		},
		TypeCoding: {
			allow: []string{"mail.*", "agent.get_status", "system.log_decision", "review.request", "github.*",
				"task.list", "task.show", "task.claim", "task.release", "task.update_status", "lock.*", "conflict.list",
				"agent.rotate_token", "session.*", "cycle.*", "handoff.*"},
			deny: []string{"supervisor.*", "orchestrator.*"},
		},
		TypeReview: {
			allow: []string{"mail.*", "agent.get_status", "system.log_decision", "review.send_feedback", "github.create_pull_request",
				"task.list", "task.show", "lock.*", "conflict.list",
				"agent.rotate_token", "session.*", "cycle.*", "handoff.*"},
			deny: []string{"supervisor.*", "orchestrator.*"},
		},
	}
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

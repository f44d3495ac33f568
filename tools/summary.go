package tools

import (
	"encoding/json"
	"fmt"

	"github.com/gitcodex/git-codex/gitstate"
)

// Summary counts what `git codex status` shows without a transaction: the
// registered agents by type, and the unread mail of caller, who must be a
// person or a registered agent.
func Summary(sn *gitstate.Snapshot, caller string) (agents map[string]int, unread int, err error) {
	agents = map[string]int{}
	err = sn.Walk(dirAgents, func(path string, data []byte) error {
		var a Agent
		if err := json.Unmarshal(data, &a); err != nil {
			return fmt.Errorf("decode %s: %w", path, err)
		}
		agents[string(a.Type)]++
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	c := Caller{ID: caller, Type: TypeHuman}
	if !IsHuman(caller) {
		if _, err := sn.Read(agentPath(caller)); err != nil {
			return nil, 0, Errorf(AgentNotFound, "%q is not a registered agent; register it with `git codex agent add %s --type <type>`", caller, caller).With("agent_id", caller)
		}
		c.Type = ""
	}
	err = sn.Walk(mailDir(inboxOf(c)), func(path string, data []byte) error {
		var m Mail
		if err := json.Unmarshal(data, &m); err != nil {
			return fmt.Errorf("decode %s: %w", path, err)
		}
		if !m.IsRead {
			unread++
		}
		return nil
	})
	return agents, unread, err
}

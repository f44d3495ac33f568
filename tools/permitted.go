package tools

import (
	"errors"
	"strings"

	"github.com/gitcodex/git-codex/gitstate"
)

// Permitted returns the tools the caller's policy allows, sorted by name, as
// the state in sn says: the policy in its config and the caller's type in
// its agent record. A caller that is not a registered agent may call
// nothing (every call is refused with AGENT_NOT_FOUND), and neither may
// anyone before init. Adapters list these tools; calling another one still
// goes through Call, which refuses it and records the refusal.
func (r *Registry) Permitted(sn *gitstate.Snapshot, callerID string) ([]*Tool, error) {
	if sn.Commit() == "" || ValidateCallerID(callerID) != nil {
		return nil, nil
	}
	typ := TypeHuman
	if !IsHuman(callerID) {
		var a Agent
		err := sn.Get(AgentPath(callerID), &a)
		if errors.Is(err, gitstate.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		typ = a.Type
	}
	cfg, err := LoadConfig(sn, r.keys())
	if err != nil {
		return nil, err
	}
	var out []*Tool
	for _, t := range r.All() {
		if permitted(cfg, typ, t.Permission) {
			out = append(out, t)
		}
	}
	return out, nil
}

// ChangesPolicy reports whether a successful call of t may change what
// Permitted reads: the config (policy keys) or an agent's record and type.
// Adapters that follow the policy look again after such calls; other
// changes (a sync, another process's call) they find by watching the tip.
func (t *Tool) ChangesPolicy() bool {
	return strings.HasPrefix(t.Permission, "config.") || t.Permission == PermRegisterAgent
}

// PermRegisterAgent is agent_register's permission: registering an agent
// gives it a type, which the policy is per.
const PermRegisterAgent = "agent.register"

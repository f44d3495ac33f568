package tools

import (
	"errors"

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
		err := sn.Get(agentPath(callerID), &a)
		if errors.Is(err, gitstate.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		typ = a.Type
	}
	cfg, err := loadConfig(sn)
	if err != nil {
		return nil, err
	}
	rule := cfg.rule(typ)
	var out []*Tool
	for _, t := range r.All() {
		if rule.permits(t.Permission) {
			out = append(out, t)
		}
	}
	return out, nil
}

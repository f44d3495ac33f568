package cycle

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/lock"
)

// SessionOpenIn is session_open's input.
type SessionOpenIn struct {
	Role    string `json:"role" jsonschema:"the role to act as, e.g. gemini or codex"`
	PSK     string `json:"psk,omitempty" jsonschema:"the role's pre-shared key; not needed by the agent bound to the role at cycle_start, presenting its own credential"`
	Feature string `json:"feature,omitempty" jsonschema:"tie the session to this feature's cycle (needed only when several run)"`
}

// SessionOpened is what session_open returns: the token, shown only here.
type SessionOpened struct {
	SessionToken string `json:"session_token" jsonschema:"present it to lock_acquire, handoff_write, cycle_complete and cycle_archive; shown only now"`
	SessionID    string `json:"session_id"`
	Role         string `json:"role"`
	Feature      string `json:"feature,omitempty"`
}

// SessionOpen opens a role's session.
var SessionOpen = tools.Define("session_open", "session.open",
	"Open a session as a cycle role (seed 001's session.open) with the role's pre-shared key, which lives on this machine only (git config codex.role.<role>.psk or CODEX_PSK_<ROLE>). Returns a session token once; the state keeps its hash.",
	tools.CLI{Path: "session open", Args: []string{"role"}},
	func(ctx context.Context, c *tools.Call, in SessionOpenIn) (SessionOpened, error) {
		w, err := configWorkflow(c.Config)
		if err != nil {
			return SessionOpened{}, err
		}
		if !w.HasRole(in.Role) {
			return SessionOpened{}, tools.Errorf(tools.InvalidRole, "%q is not a role of the workflow (roles: %v)", in.Role, w.Roles()).With("role", in.Role).With("roles", w.Roles())
		}
		if in.Feature != "" {
			if err := lock.ValidFeature(in.Feature); err != nil {
				return SessionOpened{}, err
			}
		}
		if err := checkRoleCredential(c, in); err != nil {
			return SessionOpened{}, err
		}
		token := tools.NewSecret(tools.PrefixSessionToken)
		hash := tools.HashSecret(token)
		now := c.Tx.Now()
		s := Session{ID: hash[:24], Role: in.Role, Feature: in.Feature, TokenHash: hash, CreatedBy: c.Caller.ID, CreatedAt: now, LastSeen: now, Clock: c.Tx.Clock()}
		c.Target(s.ID)
		c.Summarize("%s opened a session as %s", c.Caller.ID, in.Role)
		return SessionOpened{SessionToken: token, SessionID: s.ID, Role: s.Role, Feature: s.Feature}, c.Tx.Put(sessionPath(s.ID), s)
	})

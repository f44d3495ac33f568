package tools

import (
	"context"
	"fmt"
)

// Modes of auth.agents: how a call made as an agent proves it is that agent.
const (
	AuthOff      = "off"      // the caller is believed (--as, CODEX_INSTANCE)
	AuthWarn     = "warn"     // believed, but a call without the agent's valid credential is marked in its audit record
	AuthRequired = "required" // a call as an agent without its valid credential is refused (AUTH_FAILED)
)

// defaultAuthMode is warn: repositories and MCP configs made before
// credentials existed keep working, and every call that could not prove its
// identity says so in the audit trail (Codex-Auth: none); a team turns on
// required with one config_set once its agents have tokens. docs/SECURITY.md
// gives the reasoning.
const defaultAuthMode = AuthWarn

// Values of the Codex-Auth trailer.
const (
	authToken   = "token"   // the agent presented its valid credential
	authNone    = "none"    // an agent call without a credential
	authInvalid = "invalid" // an agent call with a wrong or outdated credential
)

// authenticate checks the caller's credential against the mode in force,
// after resolveCaller has found the agent's record. It sets the Codex-Auth
// trailer and, under required, refuses with AUTH_FAILED: an agent without
// its valid credential, and a person acting from an agent's environment.
func authenticate(c *Call, o Origin) error {
	mode := c.Config.stringValue("auth.agents")
	if mode == AuthOff {
		return nil
	}
	if IsHuman(c.Caller.ID) {
		if mode == AuthRequired && (o.AgentEnv || o.Token != "") {
			c.auth = authInvalid
			return Errorf(AuthFailed, "acting as a person (%s) from an agent's environment (CODEX_INSTANCE or CODEX_TOKEN set) is refused while auth.agents is required; run it from your own shell",
				c.Caller.ID).With("caller", c.Caller.ID)
		}
		return nil
	}
	switch {
	case c.Agent != nil && matchesHash(o.Token, c.Agent.TokenHash):
		c.auth, c.authenticated = authToken, true
		return nil
	case o.Token == "":
		c.auth = authNone
	default:
		c.auth = authInvalid
	}
	if mode != AuthRequired {
		// believed, and told so: a warning nobody sees is no warning
		what := "without its credential"
		if c.auth == authInvalid {
			what = "with a credential that is not its own (wrong, or replaced by a newer one)"
		}
		c.warnings = append(c.warnings, fmt.Sprintf("call as agent %s %s: believed because auth.agents is warn, and marked Codex-Auth: %s in the audit trail; "+
			"under auth.agents=required it is refused. Present the token `git codex agent add` or `agent rotate-token %s` issued, as CODEX_TOKEN or --token",
			c.Caller.ID, what, c.auth, c.Caller.ID))
		return nil
	}
	return Errorf(AuthFailed, "call as agent %s without its valid credential; present the token `git codex agent add` or `agent rotate-token %s` issued, as CODEX_TOKEN or --token",
		c.Caller.ID, c.Caller.ID).With("caller", c.Caller.ID)
}

// AgentRotateTokenIn is agent_rotate_token's input.
type AgentRotateTokenIn struct {
	ID string `json:"id" jsonschema:"the agent whose credential to replace"`
}

// AgentToken is a credential as it is shown, once, to whoever made it.
type AgentToken struct {
	ID    string `json:"id"`
	Token string `json:"token" jsonschema:"the agent's credential: give it to the agent as CODEX_TOKEN; it is shown only now (the state keeps its hash)"`
}

// AgentRotateToken replaces an agent's credential.
var AgentRotateToken = Define("agent_rotate_token", "agent.rotate_token",
	"Issue a new credential for an agent, replacing its old one (which stops working at once). The token is shown only in this answer; the state keeps its hash. People and supervisors may rotate any agent's; an agent its own, presenting its current one.",
	CLI{Path: "agent rotate-token", Args: []string{"id"}},
	func(ctx context.Context, c *Call, in AgentRotateTokenIn) (AgentToken, error) {
		a, err := getAgent(c.Tx, in.ID)
		if err != nil {
			return AgentToken{}, err
		}
		self := c.Caller.ID == in.ID && c.authenticated
		if !self && !mayForce(c.Caller.Type) {
			return AgentToken{}, Errorf(PermissionDenied, "only a person, a supervisor, or %s itself (presenting its current credential) may rotate its credential", in.ID).With("agent_id", in.ID)
		}
		token := newSecret(prefixAgentToken)
		a.TokenHash = hashSecret(token)
		a.UpdatedAt, a.UpdatedBy, a.Clock = c.Tx.Now(), c.Caller.ID, c.Tx.Clock()
		c.Target(a.ID)
		c.Summarize("%s rotated the credential of %s", c.Caller.ID, a.ID)
		return AgentToken{ID: a.ID, Token: token}, c.Tx.Put(agentPath(a.ID), a)
	})

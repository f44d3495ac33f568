package tools

import (
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
	mode := c.Config.StringValue("auth.agents")
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
	case c.Agent != nil && MatchesHash(o.Token, c.Agent.TokenHash):
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

// authKeys are the framework's settings of authentication.
func authKeys() []ConfigKey {
	return []ConfigKey{
		{Name: "auth.agents", Kind: "string", Default: defaultAuthMode, OneOf: []string{AuthOff, AuthWarn, AuthRequired},
			Doc: "how agents prove who they are: off (believed), warn (calls without the agent's credential are marked Codex-Auth: none), required (refused with AUTH_FAILED); see docs/SECURITY.md"},
	}
}

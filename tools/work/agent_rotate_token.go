package work

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
)

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
var AgentRotateToken = tools.Define("agent_rotate_token", "agent.rotate_token",
	"Issue a new credential for an agent, replacing its old one (which stops working at once). The token is shown only in this answer; the state keeps its hash. People and supervisors may rotate any agent's; an agent its own, presenting its current one.",
	tools.CLI{Path: "agent rotate-token", Args: []string{"id"}},
	func(ctx context.Context, c *tools.Call, in AgentRotateTokenIn) (AgentToken, error) {
		a, err := tools.GetAgent(c.Tx, in.ID)
		if err != nil {
			return AgentToken{}, err
		}
		self := c.Caller.ID == in.ID && c.Authenticated()
		if !self && !tools.MayForce(c.Caller.Type) {
			return AgentToken{}, tools.Errorf(tools.PermissionDenied, "only a person, a supervisor, or %s itself (presenting its current credential) may rotate its credential", in.ID).With("agent_id", in.ID)
		}
		token := tools.NewSecret(tools.PrefixAgentToken)
		a.TokenHash = tools.HashSecret(token)
		a.UpdatedAt, a.UpdatedBy, a.Clock = c.Tx.Now(), c.Caller.ID, c.Tx.Clock()
		c.Target(a.ID)
		c.Summarize("%s rotated the credential of %s", c.Caller.ID, a.ID)
		return AgentToken{ID: a.ID, Token: token}, c.Tx.Put(tools.AgentPath(a.ID), a)
	})

package delegate

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
)

// SetModelIn is agent_set_model's input.
type SetModelIn struct {
	SessionID string `json:"session_id"`
	Model     string `json:"model" jsonschema:"e.g. sonnet, opus, haiku"`
}

// AgentSetModel changes a session's model for its next turn.
var AgentSetModel = tools.Define("agent_set_model", "delegate.set_model",
	"Change a delegated session's model; its next turn (agent_continue) runs with it.",
	tools.CLI{Path: "delegate set-model", Args: []string{"session_id", "model"}},
	func(ctx context.Context, c *tools.Call, in SetModelIn) (*SessionChanged, error) {
		if in.Model == "" {
			return nil, tools.Errorf(tools.InvalidInput, "model is required (e.g. sonnet, opus, haiku)").With("field", "model")
		}
		return changeSession(c, in.SessionID, func(d *Delegation) error {
			if err := checkDelegateOptions(in.Model, ""); err != nil {
				return err
			}
			d.Model = in.Model
			return nil
		}, "Model changed to "+in.Model)
	})

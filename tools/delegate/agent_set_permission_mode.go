package delegate

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
)

// SetPermissionModeIn is agent_set_permission_mode's input.
type SetPermissionModeIn struct {
	SessionID string `json:"session_id"`
	Mode      string `json:"mode" jsonschema:"auto, allow or deny"`
}

// AgentSetPermissionMode changes a session's permission mode.
var AgentSetPermissionMode = tools.Define("agent_set_permission_mode", "delegate.set_permission_mode",
	"Change a delegated session's permission mode (auto, allow, deny); its next turn runs with it.",
	tools.CLI{Path: "delegate set-permission-mode", Args: []string{"session_id", "mode"}},
	func(ctx context.Context, c *tools.Call, in SetPermissionModeIn) (*SessionChanged, error) {
		return changeSession(c, in.SessionID, func(d *Delegation) error {
			if in.Mode == "" {
				return tools.Errorf(tools.InvalidInput, "mode is required: auto, allow or deny").With("field", "mode")
			}
			if err := checkDelegateOptions("", in.Mode); err != nil {
				return err
			}
			d.PermissionMode = in.Mode
			return nil
		}, "Permission mode changed to "+in.Mode)
	})

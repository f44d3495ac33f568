package delegate

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
)

// AgentAbort kills a running turn.
var AgentAbort = tools.Define("agent_abort", "delegate.abort",
	"Forcefully stop a delegated session's running turn: SIGKILL to its whole process group. The session is ABORTED.",
	tools.CLI{Path: "delegate abort", Args: []string{"session_id"}},
	func(ctx context.Context, c *tools.Call, in SessionIDIn) (*SessionStopped, error) {
		return stopTurn(c, in.SessionID, "abort")
	})

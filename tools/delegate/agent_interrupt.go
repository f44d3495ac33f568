package delegate

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
)

// AgentInterrupt stops a running turn gracefully.
var AgentInterrupt = tools.Define("agent_interrupt", "delegate.interrupt",
	"Gracefully stop a delegated session's running turn: SIGINT to its process group, then wait for it to end (killed after 5 s). "+
		"The turn's caller gets its partial result; the session is INTERRUPTED and may be continued.",
	tools.CLI{Path: "delegate interrupt", Args: []string{"session_id"}},
	func(ctx context.Context, c *tools.Call, in SessionIDIn) (*SessionStopped, error) {
		return stopTurn(c, in.SessionID, "interrupt")
	})

package delegate

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
)

// AgentQueryStream is agent_query that reports each message as it comes.
var AgentQueryStream = tools.Define("agent_query_stream", "delegate.query",
	"Same as agent_query, and each message (assistant text, tool use, tool result) is reported as it comes: as MCP progress notifications "+
		"(when the client sends a progress token), or printed on stderr from the CLI. Returns the final result.",
	tools.CLI{Path: "delegate stream", Args: []string{"prompt"}, Envelope: true},
	func(ctx context.Context, c *tools.Call, in DelegateQueryIn) (*DelegateResult, error) {
		return startQuery(c, in, true)
	})

package work

import (
	"context"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
)

// LogLevels are the MCP log levels (RFC 5424's, lowest first), the values
// of mcp.log_level and `git codex mcp --log-level`.
func LogLevels() []string {
	return []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
}

// mcpKeys are the settings of `git codex mcp`.
func mcpKeys() []tools.ConfigKey {
	return []tools.ConfigKey{
		{Name: "mcp.log_level", Kind: "string", Default: "", OneOf: LogLevels(),
			Doc: "the level `git codex mcp` logs at from its start: on stderr, and as notifications/message to a client that has not set one (logging/setLevel still changes it); empty: warnings on stderr, and notifications only once the client asks. --log-level and MCP_LOG_LEVEL override it"},
	}
}

// MCPLogLevel is mcp.log_level at the state's tip ("" when unset or
// unreadable: the server starts at its defaults, and says why elsewhere).
func MCPLogLevel(ctx context.Context, st *gitstate.Store, keys *tools.ConfigKeys) string {
	cfg, err := tools.ConfigAt(ctx, st, keys)
	if err != nil {
		return ""
	}
	return cfg.StringValue("mcp.log_level")
}

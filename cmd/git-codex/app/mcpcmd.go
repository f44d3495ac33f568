package app

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/gitcodex/git-codex/cmd/git-codex/mcpserver"
	"github.com/gitcodex/git-codex/tools/work"
	"github.com/urfave/cli/v2"
)

// mcpCommand is `git codex mcp`: the adapter that fixes the caller, checks
// that it may be served, and runs package mcpserver on stdin and stdout
// until the client goes.
func (e *env) mcpCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve the tools your policy allows over MCP on stdin/stdout (agents launch this)",
		Description: "The caller is fixed at launch: --as <id> or CODEX_INSTANCE, else human:<git user.email>.\n" +
			"It refuses to start (exit 1, the reason on stderr) for an agent that is not registered, a\n" +
			"CODEX_TOKEN that is not the agent's credential, or none where auth.agents is required.\n" +
			"Logs go to stderr; stdout carries only the protocol. Clients that set a level with\n" +
			"logging/setLevel also get each call (info) and each refusal (warning) as notifications/message.\n" +
			"--log-level (or MCP_LOG_LEVEL, else the config's mcp.log_level) sets, from the start, the level\n" +
			"of stderr and of notifications to a client that has not set one. --tool-timeout (or\n" +
			"MCP_TOOL_TIMEOUT) bounds every call served, as tools.timeout_seconds does.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "log-level", EnvVars: []string{"MCP_LOG_LEVEL"}, Usage: "log at `LEVEL` from the start: " + strings.Join(work.LogLevels(), ", ") + " (default: the config's mcp.log_level; unset: warnings on stderr, notifications once the client asks)"},
			&cli.IntFlag{Name: "tool-timeout", EnvVars: []string{"MCP_TOOL_TIMEOUT"}, Usage: "the time limit of the calls served, in `SECONDS`, instead of the config's tools.timeout_seconds (a tool's own tools.<tool>.timeout_seconds still wins)"},
		},
		Action: func(c *cli.Context) error {
			level := c.String("log-level")
			if level != "" && !slices.Contains(work.LogLevels(), level) {
				return usageError{err: fmt.Errorf("--log-level takes one of %s, not %q", strings.Join(work.LogLevels(), ", "), level), help: c.Command.HelpName}
			}
			if c.Int("tool-timeout") < 0 {
				return usageError{err: fmt.Errorf("--tool-timeout takes a number of seconds, not %d", c.Int("tool-timeout")), help: c.Command.HelpName}
			}
			o, st, err := e.origin(c) // the credential comes from the launch environment
			if err != nil {
				return err
			}
			defer st.Close()
			if level == "" {
				level = work.MCPLogLevel(c.Context, st, e.reg.ConfigKeys())
			}
			// fail loudly now rather than serve nothing while the client
			// shows the server connected
			if _, refusal := e.reg.CheckServer(c.Context, st, o); refusal != nil {
				return refusal
			}
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			// a client that went away closes the pipe our answers and
			// progress go to: the write fails, rather than SIGPIPE ending
			// the server before running calls record how they ended
			signal.Ignore(syscall.SIGPIPE)
			s := mcpserver.New(e.reg, st, o, mcpserver.Options{
				Logger:  slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: mcpserver.SlogLevel(level)})),
				Level:   level,
				Timeout: time.Duration(c.Int("tool-timeout")) * time.Second,
				Version: version,
			})
			return s.Serve(ctx, e.stdin, e.stdout)
		},
	}
}

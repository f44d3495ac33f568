package app

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v2"
)

const mcpInstructions = "git codex coordinates AI coding agents inside this git repository. " +
	"Every tool call is recorded as a commit on refs/codex/state. Results are envelopes: " +
	`{"ok":true,"data":...} or {"ok":false,"error":{"code","message","details"}}; branch on error.code.`

func (e *env) mcpCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve every tool over MCP on stdin/stdout (agents launch this)",
		Description: "The caller is fixed at launch: --as <id> or CODEX_INSTANCE, else human:<git user.email>.\n" +
			"Logs go to stderr; stdout carries only the protocol.",
		Action: func(c *cli.Context) error {
			caller, st, err := e.session(c)
			if err != nil {
				return err
			}
			defer st.Close()
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
			srv := mcpServer(e.reg, st, caller, logger)
			return srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(e.stdin), Writer: nopWriteCloser{e.stdout}})
		},
	}
}

// mcpServer exposes every registered tool. The registry decodes and checks
// the arguments itself (so refusals are audited too); the result envelope
// is both the structured content and, as JSON text, the content.
func mcpServer(reg *tools.Registry, st *gitstate.Store, caller string, logger *slog.Logger) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "git-codex", Version: version},
		&mcp.ServerOptions{Instructions: mcpInstructions, Logger: logger})
	for _, t := range reg.All() {
		name := t.Name
		srv.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema()},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				res := reg.Call(ctx, st, caller, name, req.Params.Arguments)
				text, err := json.Marshal(res)
				if err != nil {
					return nil, err
				}
				if !res.OK {
					logger.Warn("tool refused", "tool", name, "code", res.Error.Code, "message", res.Error.Message)
				}
				return &mcp.CallToolResult{
					Content:           []mcp.Content{&mcp.TextContent{Text: string(text)}},
					StructuredContent: json.RawMessage(text),
					IsError:           !res.OK,
				}, nil
			})
	}
	return srv
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

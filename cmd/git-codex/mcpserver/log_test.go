//lint:file-ignore SA1019 logging is deprecated in MCP 2026-07-28; the server still serves clients of earlier versions

package mcpserver

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPLogNotifications: the server sends each call (info) and refusal
// (warning) as notifications/message, at the level the client set and
// above only: with logging/setLevel for the session (protocol versions
// before 2026-07-28, which the clients speak), or per request in
// _meta (2026-07-28, where setLevel is deprecated).
func TestMCPLogNotifications(t *testing.T) {
	dir := mcpRepo(t)
	ctx := context.Background()
	connect := func(version string) (*mcp.ClientSession, func(string) map[string]any, chan *mcp.LoggingMessageParams) {
		msgs := make(chan *mcp.LoggingMessageParams, 16)
		cs, _, _ := mcpConnectWith(t, dir, "alice", &mcp.ClientOptions{
			LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) { msgs <- r.Params },
		}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if got := cs.InitializeResult().ProtocolVersion; got != version {
			t.Fatalf("negotiated %s, want %s", got, version)
		}
		next := func(why string) map[string]any {
			t.Helper()
			select {
			case m := <-msgs:
				var data map[string]any
				remarshal(t, m.Data, &data)
				data["level"] = string(m.Level)
				return data
			case <-time.After(20 * time.Second):
				t.Fatalf("no notifications/message after %s", why)
				return nil
			}
		}
		return cs, next, msgs
	}

	t.Run("setLevel", func(t *testing.T) {
		cs, next, msgs := connect("2025-11-25")
		// Before logging/setLevel nothing is sent; at warning, only refusals.
		mcpCall(t, cs, "mail_list_inbox", `{}`)
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
			t.Fatal(err)
		}
		mcpCall(t, cs, "mail_list_inbox", `{}`)
		mcpCall(t, cs, "agent_list", `{}`)
		m := next("a refusal at level warning")
		if m["level"] != "warning" || m["event"] != "refused" || m["tool"] != "agent_list" || m["code"] != "PERMISSION_DENIED" || m["commit"] != stateHead(t, dir) {
			t.Fatalf("first message at level warning: %v, want agent_list's refusal", m)
		}
		// At info, calls too, with their audit commit.
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			t.Fatal(err)
		}
		env := mcpCall(t, cs, "mail_send", `{"to":"boss","subject":"s","body":"b"}`)
		m = next("a call at level info")
		if head := stateHead(t, dir); !env.OK || m["level"] != "info" || m["event"] != "call" || m["tool"] != "mail_send" || m["commit"] != head {
			t.Fatalf("message at level info: %v, want mail_send's call at %s", m, head)
		}
		select {
		case m := <-msgs:
			t.Errorf("unexpected message %v", m)
		default:
		}
	})

	t.Run("per-request", func(t *testing.T) {
		cs, next, _ := connect("2026-07-28")
		call := func(tool, level string) {
			p := &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(`{}`)}
			if level != "" {
				p.Meta = mcp.Meta{mcp.MetaKeyLogLevel: level}
			}
			if _, err := cs.CallTool(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		call("mail_list_inbox", "")
		call("mail_list_inbox", "warning")
		call("agent_list", "warning")
		if m := next("a refusal at level warning"); m["level"] != "warning" || m["tool"] != "agent_list" {
			t.Fatalf("first message: %v, want agent_list's refusal", m)
		}
		call("mail_list_inbox", "debug")
		if m := next("a call at level debug"); m["level"] != "info" || m["tool"] != "mail_list_inbox" || m["event"] != "call" {
			t.Fatalf("message at level debug: %v, want mail_list_inbox's call", m)
		}
	})
}

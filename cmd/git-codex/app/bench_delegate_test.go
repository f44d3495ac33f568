package app

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
)

// fakeClaudeScript answers a headless claude turn at once: system/init, one
// assistant message, the result (claude -p's stream-json contract).
const fakeClaudeScript = "#!/bin/sh\ncat >/dev/null\n" +
	`echo '{"type":"system","subtype":"init","session_id":"c-1"}'` + "\n" +
	`echo '{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":1,"output_tokens":1}},"session_id":"c-1"}'` + "\n" +
	`echo '{"type":"result","subtype":"success","is_error":false,"result":"hi","session_id":"c-1","total_cost_usd":0.001,"num_turns":1}'` + "\n"

// BenchmarkDelegatedTurn measures git codex's overhead around one delegated
// turn (issue 14's target: <= 30 ms beyond the agent CLI's own time): an
// agent_query through the registry (intent commit, process, outcome
// commit) with a fake claude that answers at once, less the same fake run
// alone. It reports overhead_ms/op.
func BenchmarkDelegatedTurn(b *testing.B) {
	dir := benchRepo(b)
	fake := filepath.Join(b.TempDir(), "claude")
	if err := os.WriteFile(fake, []byte(fakeClaudeScript), 0o755); err != nil {
		b.Fatal(err)
	}
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	reg := builtin.Registry()
	if r := reg.CallAs(ctx, st, tools.Origin{ID: mcpHuman}, "config_set", json.RawMessage(`{"key":"agent.claude.command","value":"`+fake+`"}`)); !r.OK {
		b.Fatal(r.Error)
	}
	// the CLI alone, as the runner starts it
	const alone = 50
	start := time.Now()
	for range alone {
		cmd := exec.Command("sh", "-c", "exec "+fake+` "$@"`, "sh", "-p", "--output-format", "stream-json", "--verbose")
		cmd.Stdin = strings.NewReader("hello")
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
	cli := time.Since(start) / alone
	b.ResetTimer()
	for range b.N {
		if r := reg.CallAs(ctx, st, tools.Origin{ID: mcpHuman}, "agent_query", json.RawMessage(`{"prompt":"hello"}`)); !r.OK {
			b.Fatal(r.Error)
		}
	}
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(per-cli)/float64(time.Millisecond), "overhead_ms/op")
	b.ReportMetric(float64(cli)/float64(time.Millisecond), "cli_ms/op")
}

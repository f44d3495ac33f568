package demo

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/tools"
)

// TestAgentEnv: the agents never get the person's forge credentials,
// repository or agent identity, only the demo's own values.
func TestAgentEnv(t *testing.T) {
	got := agentEnv([]string{"PATH=/bin", "GH_TOKEN=ghp_real", "GITHUB_TOKEN=real", "GH_REPO=me/mine", "CODEX_INSTANCE=alice",
		"CODEX_TOKEN=ctok_x", "TMUX=/tmp/tmux-1/default,1,0", "HOME=/home/me"}, map[string]string{"GH_TOKEN": "demo_1"})
	want := []string{"PATH=/bin", "HOME=/home/me", "GH_TOKEN=demo_1"}
	if !slices.Equal(got, want) {
		t.Errorf("agentEnv = %q, want %q", got, want)
	}
}

// TestWorkspace: --dir must be new or empty, and the worktrees' directory
// beside it new; removal takes what the demo made and leaves an empty
// --dir that was there before.
func TestWorkspace(t *testing.T) {
	base := t.TempDir()
	full := filepath.Join(base, "full")
	os.MkdirAll(full, 0o755)
	os.WriteFile(filepath.Join(full, "x"), []byte("x"), 0o644)
	var te *tools.Error
	if _, err := newWorkspace(full); !errors.As(err, &te) || te.Code != tools.InvalidInput {
		t.Errorf("a non-empty --dir: %v, want INVALID_INPUT", err)
	}
	taken := filepath.Join(base, "taken")
	os.MkdirAll(taken+".codex-worktrees", 0o755)
	if _, err := newWorkspace(taken); !errors.As(err, &te) || te.Code != tools.InvalidInput {
		t.Errorf("a --dir whose worktrees' directory exists: %v, want INVALID_INPUT", err)
	}

	empty := filepath.Join(base, "empty")
	os.MkdirAll(empty, 0o755)
	ws, err := newWorkspace(empty)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(ws.repo, ".git"), 0o755)
	os.MkdirAll(filepath.Join(ws.worktrees, "work-1"), 0o755)
	if err := ws.remove(); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(empty); err != nil || len(entries) != 0 {
		t.Errorf("the empty --dir after removal: %v, %v; want it there and empty", entries, err)
	}
	if _, err := os.Stat(ws.worktrees); !os.IsNotExist(err) {
		t.Errorf("the worktrees' directory is left: %v", err)
	}

	ws, err = newWorkspace(filepath.Join(base, "new"))
	if err != nil || !ws.made {
		t.Fatalf("a new --dir: %+v, %v", ws, err)
	}
	os.MkdirAll(ws.repo, 0o755)
	if err := ws.remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ws.repo); !os.IsNotExist(err) {
		t.Errorf("the --dir the demo made is left: %v", err)
	}
}

// TestFeedback: the coder reads the verdict and the text from
// REVIEW_FEEDBACK.md as the review loop writes it.
func TestFeedback(t *testing.T) {
	dir := t.TempDir()
	md := "# Review feedback: needs_work\n\n- reviewer: review-1\n- iteration: 1\n- reviewed commit: abc\n- feedback id: f-1\n\n" +
		"Run without a name, it greets nobody.\n\n## Actionable items\n\n- [ ] print a usage\n"
	os.WriteFile(filepath.Join(dir, "REVIEW_FEEDBACK.md"), []byte(md), 0o644)
	a := &agent{dir: dir}
	verdict, text, err := a.feedback()
	if err != nil || verdict != "needs_work" || text != "Run without a name, it greets nobody." {
		t.Errorf("feedback() = %q, %q, %v", verdict, text, err)
	}
	os.WriteFile(filepath.Join(dir, "REVIEW_FEEDBACK.md"), []byte("hello\n"), 0o644)
	if _, _, err := a.feedback(); err == nil {
		t.Errorf("a file without a verdict was read as feedback")
	}
}

// TestAgentNeedsItsMCPConfig: started without the MCP config git codex
// writes (not by spawn), the stand-in says so and exits 1, as an agent CLI
// refuses a bad configuration.
func TestAgentNeedsItsMCPConfig(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"unset":     {},
		"missing":   {"CODEX_MCP_CONFIG": filepath.Join(t.TempDir(), "none.json")},
		"no server": {"CODEX_MCP_CONFIG": writeFile(t, `{"mcpServers":{}}`)},
	} {
		var out bytes.Buffer
		code := RunAgent(context.Background(), AgentIO{Stdin: strings.NewReader(""), Stdout: &out, Getenv: func(k string) string { return env[k] }, Exe: "false"})
		if code != 1 || !strings.Contains(out.String(), "MCP config") {
			t.Errorf("%s: exit %d, output %q; want 1 and a word on the MCP config", name, code, out.String())
		}
	}
}

func writeFile(t *testing.T, content string) string {
	p := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The MCP config git codex writes names ${CODEX_INSTANCE} and
// ${CODEX_TOKEN}: the stand-in expands them from its environment, as
// Claude Code does (an unset one with a default takes it).
func TestAgentExpandsTheConfigsVariables(t *testing.T) {
	env := map[string]string{"CODEX_INSTANCE": "coder1", "CODEX_TOKEN": "ctok_x"}
	getenv := func(k string) string { return env[k] }
	for in, want := range map[string]string{
		"${CODEX_INSTANCE}":       "coder1",
		"${CODEX_TOKEN}":          "ctok_x",
		"a-${CODEX_INSTANCE}-b":   "a-coder1-b",
		"${UNSET:-fallback}":      "fallback",
		"${UNSET}":                "${UNSET}",
		"${CODEX_TOKEN:-default}": "ctok_x",
		"plain":                   "plain",
	} {
		if got := expandEnv(in, getenv); got != want {
			t.Errorf("expandEnv(%q) = %q; want %q", in, got, want)
		}
	}
	a := &agent{AgentIO: AgentIO{Getenv: func(k string) string {
		if k == "CODEX_MCP_CONFIG" {
			return writeFile(t, `{"mcpServers":{"git-codex":{"command":"git-codex","env":{"CODEX_INSTANCE":"${CODEX_INSTANCE}","CODEX_TOKEN":"${CODEX_TOKEN}"}}}}`)
		}
		return env[k]
	}}}
	if err := a.load(); err != nil || a.id != "coder1" || a.token != "ctok_x" {
		t.Errorf("load: id %q, token %q, err %v; want coder1, ctok_x", a.id, a.token, err)
	}
}

// TestAwaitReviewEnd: the coder that finds its feedback committed while
// its record still says WAITING_REVIEW (the loop records the review as
// over a moment after it commits REVIEW_FEEDBACK.md) asks again until the
// record says otherwise, so its next request_review is not refused. The
// executable answers agent_get_status as `git codex call` does: WAITING_REVIEW
// twice, then ACTIVE.
func TestAwaitReviewEnd(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "git-codex")
	script := `#!/bin/sh
n=$(cat "$0.n" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$0.n"
status=ACTIVE; [ $n -le 2 ] && status=WAITING_REVIEW
printf '{"ok":true,"data":{"id":"work-1","type":"coding","status":"%s"}}\n' $status
`
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	a := &agent{AgentIO: AgentIO{Stdout: &out, Exe: exe}, dir: dir}
	if err := a.awaitReviewEnd(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, _ := os.ReadFile(exe + ".n"); strings.TrimSpace(string(n)) != "3" {
		t.Errorf("agent_get_status was called %s times, want 3 (until the record left WAITING_REVIEW)\n%s", n, out.String())
	}
}

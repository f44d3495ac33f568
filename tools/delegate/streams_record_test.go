package delegate

// The recorder of testdata/streams: each agent CLI's output lines for
// normal turns, tool calls and errors, taken from the real binaries run
// against the stand-in model API (tools/modelapi). The parsers' unit tests
// (streams_test.go) read these files; run this to record them again for
// new CLI versions:
//
//	CODEX_RECORD_STREAMS=1 go test -tags urfave_cli_no_docs ./tools -run TestRecordStreams

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/tools/instance"
	"github.com/gitcodex/git-codex/tools/internal/agentclitest"
	"github.com/gitcodex/git-codex/tools/modelapi"
)

// streamCase is one recorded run: the CLI's arguments after its headless
// ones, the model's script, and whether it resumes the previous case's
// session (the session id is appended as the CLI takes it).
type streamCase struct {
	name   string
	args   []string
	script []modelapi.Reply
	resume bool
	prompt string
}

func TestRecordStreams(t *testing.T) {
	if os.Getenv("CODEX_RECORD_STREAMS") == "" {
		t.Skip("set CODEX_RECORD_STREAMS=1 to record testdata/streams from the real CLIs")
	}
	out := filepath.Join("testdata", "streams")
	os.MkdirAll(out, 0o755)
	srv := agentclitest.StandinServer(t) // an MCP server named git-codex with agent_get_status
	read := func(wd string) map[string]any { return map[string]any{"file_path": filepath.Join(wd, "notes.txt")} }
	big := modelapi.Usage{Input: 1200, CacheRead: 30000, CacheWrite: 2800, Output: 66}

	for _, cli := range []string{"claude", "codex", "gemini"} {
		t.Run(cli, func(t *testing.T) {
			bin := agentclitest.AgentCLI(t, cli)
			home, wd := t.TempDir(), t.TempDir()
			agentclitest.GitInit(t, wd)
			os.WriteFile(filepath.Join(wd, "notes.txt"), []byte("remember the milk\n"), 0o644)
			var cases []streamCase
			switch cli {
			case "claude":
				cfg := filepath.Join(home, "mcp.json")
				os.WriteFile(cfg, []byte(`{"mcpServers":{"git-codex":{"command":"`+filepath.Join(srv, "git-codex")+`","args":["mcp"]}}}`), 0o600)
				cases = []streamCase{
					{name: "text", script: []modelapi.Reply{{Text: "Hello from the stand-in.", Usage: big}}},
					{name: "tool", script: []modelapi.Reply{
						{Text: "Let me read the notes first.", ToolCalls: []modelapi.ToolCall{{Name: "Read", Args: read(wd)}}, Usage: modelapi.Usage{Input: 500, CacheRead: 20000, CacheWrite: 1000, Output: 40}},
						{Text: "The notes say: remember the milk.", Usage: modelapi.Usage{Input: 300, CacheRead: 21000, CacheWrite: 200, Output: 20}}}},
					{name: "resume", resume: true, prompt: "and again", script: []modelapi.Reply{{Text: "Still: remember the milk.", Usage: modelapi.Usage{Input: 100, CacheRead: 21500, Output: 9}}}},
					{name: "mcp", args: []string{"--allowedTools", "mcp__git-codex", "--mcp-config", cfg}, script: []modelapi.Reply{
						{ToolCalls: []modelapi.ToolCall{{Name: "mcp__git-codex__agent_get_status"}}, Usage: modelapi.Usage{Input: 800, Output: 15}},
						{Text: "The agent is ACTIVE.", Usage: modelapi.Usage{Input: 900, Output: 6}}}},
					{name: "max-turns", args: []string{"--max-turns", "1"}, script: []modelapi.Reply{
						{Text: "Reading.", ToolCalls: []modelapi.ToolCall{{Name: "Read", Args: read(wd)}}}}},
					{name: "denied", script: []modelapi.Reply{
						{ToolCalls: []modelapi.ToolCall{{Name: "Bash", Args: map[string]any{"command": "rm -rf build", "description": "clean"}}}},
						{Text: "I was not allowed to run it."}}},
					{name: "api-500", script: []modelapi.Reply{{Status: 500}}},
					{name: "overloaded-529", script: []modelapi.Reply{{Status: 529}}},
					{name: "auth-401", script: []modelapi.Reply{{Status: 401}}},
					{name: "resume-missing", args: []string{"--resume", "11111111-2222-4333-8444-555555555555"}},
				}
			case "codex":
				os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
				cases = []streamCase{
					{name: "text", script: []modelapi.Reply{{Text: "Hello from the stand-in.", Usage: big}}},
					{name: "command", args: []string{"--sandbox", "danger-full-access"}, script: []modelapi.Reply{
						{Text: "Reading the notes.", ToolCalls: []modelapi.ToolCall{{Name: "exec_command", Args: map[string]any{"cmd": "cat notes.txt"}}}, Usage: modelapi.Usage{Input: 1000, Output: 30}},
						{Text: "They say: remember the milk.", Usage: modelapi.Usage{Input: 1100, CacheRead: 1000, Output: 9}}}},
					{name: "resume", resume: true, prompt: "and again", script: []modelapi.Reply{{Text: "Still: remember the milk.", Usage: modelapi.Usage{Input: 300, CacheRead: 2000, Output: 7}}}},
					{name: "mcp", args: instance.CodexServerArgs("git-codex", filepath.Join(srv, "git-codex"), []string{"mcp"}, nil, nil, "approve"), script: []modelapi.Reply{
						{Text: "Checking.", ToolCalls: []modelapi.ToolCall{{Name: "mcp__git_codex.agent_get_status"}}, Usage: modelapi.Usage{Input: 800, Output: 15}},
						{Text: "The agent is ACTIVE.", Usage: modelapi.Usage{Input: 900, Output: 6}}}},
					{name: "mcp-refused", args: instance.CodexServerArgs("git-codex", filepath.Join(srv, "git-codex"), []string{"mcp"}, nil, nil, ""), script: []modelapi.Reply{
						{ToolCalls: []modelapi.ToolCall{{Name: "mcp__git_codex.agent_get_status"}}},
						{Text: "The call was refused."}}},
					{name: "api-500", script: []modelapi.Reply{{Status: 500}}},
					{name: "auth-401", script: []modelapi.Reply{{Status: 401}}},
				}
			case "gemini":
				os.MkdirAll(filepath.Join(home, ".gemini"), 0o700)
				os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(`{"security":{"auth":{"selectedType":"gemini-api-key"}},"general":{"maxAttempts":1}}`), 0o600)
				cases = []streamCase{
					{name: "text", script: []modelapi.Reply{{Text: "Hello from the stand-in.", Usage: big}}},
					{name: "tool", script: []modelapi.Reply{
						{Text: "Let me read the notes first.", ToolCalls: []modelapi.ToolCall{{Name: "read_file", Args: map[string]any{"file_path": "notes.txt"}}}, Usage: modelapi.Usage{Input: 1000, Output: 30}},
						{Text: "The notes say: remember the milk.", Usage: modelapi.Usage{Input: 1100, Output: 12}}}},
					{name: "resume", resume: true, prompt: "and again", script: []modelapi.Reply{{Text: "Still: remember the milk.", Usage: modelapi.Usage{Input: 1300, Output: 7}}}},
					{name: "api-500", script: []modelapi.Reply{{Status: 500}}},
					{name: "overloaded-503", script: []modelapi.Reply{{Status: 503}}},
					{name: "auth-400", script: []modelapi.Reply{{Status: 400}}},
				}
			}
			session := ""
			for _, c := range cases {
				api := modelapi.Start(t, c.script...)
				env := agentclitest.Env(t, bin, "TERM=dumb")
				env[0] = "HOME=" + home
				var args []string
				switch cli {
				case "claude":
					env = append(env, api.ClaudeEnv()...)
					args = []string{"-p", "--output-format", "stream-json", "--verbose", "--max-turns", "5", "--permission-mode", "default"}
					if c.resume {
						args = append(args, "--resume", session)
					}
					args = append(args, c.args...)
				case "codex":
					os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(api.CodexConfig()), 0o600)
					env = append(env, api.CodexEnv()...)
					args = append([]string{"exec", "--json", "--skip-git-repo-check"}, c.args...)
					if !slices.Contains(c.args, "--sandbox") {
						args = append(args, "--sandbox", "read-only")
					}
					if c.resume {
						args = append(args, "resume", session)
					}
				case "gemini":
					env = append(env, api.GeminiEnv()...)
					args = append([]string{"--skip-trust", "--prompt=", "--output-format", "stream-json", "--approval-mode", "default"}, c.args...)
					if c.resume {
						args = append(args, "--resume", session)
					}
				}
				prompt := c.prompt
				if prompt == "" {
					prompt = "say hi"
				}
				stdout, stderr, code := runCLI(t, bin, wd, env, prompt, args)
				name := cli + "-" + c.name
				if err := os.WriteFile(filepath.Join(out, name+".jsonl"), stdout, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("%s: exit %d, %d line(s), %d request(s); stderr ends %q", name, code, bytes.Count(stdout, []byte("\n")), len(api.Requests()), tail(string(stderr), 300))
				if c.name == "text" || c.name == "tool" || c.name == "command" {
					session = firstSessionID(stdout)
				}
			}
		})
	}
}

// runCLI runs an agent CLI with the prompt on standard input, in its own
// process group (killed whole at the end), for at most two minutes.
func runCLI(t *testing.T, bin, dir string, env []string, prompt string, args []string) (stdout, stderr []byte, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, strings.NewReader(prompt)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s: %v", filepath.Base(bin), err)
	}
	if exit != nil {
		code = exit.ExitCode()
	}
	return o.Bytes(), e.Bytes(), code
}

// firstSessionID is the session (thread) id a CLI's output names first.
func firstSessionID(out []byte) string {
	for _, line := range bytes.Split(out, []byte("\n")) {
		var m struct {
			SessionID string `json:"session_id"`
			ThreadID  string `json:"thread_id"`
		}
		if json.Unmarshal(line, &m) == nil {
			if m.SessionID != "" {
				return m.SessionID
			}
			if m.ThreadID != "" {
				return m.ThreadID
			}
		}
	}
	return ""
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

package instance

// Tests of the launch lines and configs git codex builds, run by the real
// agent CLIs (Claude Code 2.1.328, Codex CLI 0.169.0, Gemini CLI 0.61.0).
// .ci/run installs them into $CODEX_AGENT_CLIS; a test skips when its CLI
// is not installed, unless CODEX_AGENT_CLIS is set (CI), where it fails.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/tools/internal/agentclitest"
)

// Claude Code takes the interactive spawn line's wiring with the prompt
// after it: `claude --mcp-config <file> -- "<prompt>"`. Run with -p
// (the only mode that reports without a terminal) and stream-json, its
// first line (system/init) lists the MCP servers it loaded from the
// config git codex wrote, connected; the server got the identity the
// config names as ${CODEX_INSTANCE} and ${CODEX_TOKEN}, expanded by
// claude from its environment (the file holds no token). Without the `--` it exits 1 reading
// the prompt as a second config file: the control.
func TestRealClaudeTakesSpawnLine(t *testing.T) {
	claude := agentclitest.AgentCLI(t, "claude")
	srv := agentclitest.StandinServer(t)
	wt := t.TempDir()
	agentclitest.GitInit(t, wt)
	cfg, _, err := writeInstanceFiles(wt, "say hi")
	if err != nil {
		t.Fatal(err)
	}
	// the config names the identity's variables; their values are in
	// claude's environment only, as spawn's pane has them
	if b, _ := os.ReadFile(cfg); !strings.Contains(string(b), `"CODEX_TOKEN": "${CODEX_TOKEN}"`) || strings.Contains(string(b), "cxa_secret-token") {
		t.Fatalf("the MCP config should name ${CODEX_TOKEN}, not hold the token:\n%s", b)
	}
	wire := BuiltinLaunchers()["claude"].wire(cfg, "work-1")
	env := agentclitest.Env(t, claude, "ANTHROPIC_API_KEY=sk-ant-api03-test", "PATH="+srv+string(os.PathListSeparator)+filepath.Dir(claude)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"CODEX_INSTANCE=work-1", "CODEX_TOKEN=cxa_secret-token")

	args := append([]string{"-p", "--output-format", "stream-json", "--verbose", "--max-turns", "1"}, wire...)
	init := firstLine(t, claude, wt, env, append(args, "-starts with a dash, still the prompt")...)
	var m struct {
		Type, Subtype string
		MCPServers    []struct{ Name, Status string } `json:"mcp_servers"`
	}
	if err := json.Unmarshal(init, &m); err != nil || m.Type != "system" || m.Subtype != "init" {
		t.Fatalf("claude's first line is not system/init: %s", init)
	}
	if len(m.MCPServers) != 1 || m.MCPServers[0].Name != mcpServerName || m.MCPServers[0].Status != "connected" {
		t.Fatalf("claude's MCP servers: %+v; want git-codex connected\n%s", m.MCPServers, init)
	}
	envs := agentclitest.ServerEnvs(t, srv)
	if len(envs) == 0 || !strings.Contains(envs[0], "CODEX_INSTANCE=work-1\n") || !strings.Contains(envs[0], "CODEX_TOKEN=cxa_secret-token\n") {
		t.Fatalf("git codex's server did not get the instance's identity: %q", envs)
	}

	// the control: the line as it was (--mcp-config <file>, no --)
	noDash := slices.Clone(wire[:2])
	cmd := exec.Command(claude, append(append([]string{"-p"}, noDash...), "say hi")...)
	cmd.Dir, cmd.Env = wt, env
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "MCP config file not found") {
		t.Fatalf("claude --mcp-config <file> <prompt> (no --): err %v, output %s; want the prompt read as a config file", err, out)
	}
}

// firstLine runs a CLI and returns its first line of standard output,
// then ends it (the model API it would call next is a closed port).
func firstLine(t *testing.T, bin, dir string, env []string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, strings.NewReader("")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	// its own process group, all of which is killed (gemini runs a second
	// node that holds the pipes)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		t.Fatalf("%s %q printed no line: %v; stderr: %s", filepath.Base(bin), args, err, stderr.String())
	}
	return line
}

// Codex CLI takes the -c overrides of the spawn line as its config (a
// delegated turn's mcp_servers: TestRealCodexTakesTurnServers in
// tools/delegate): `codex mcp list --json` shows git
// codex's server with the names of the variables it passes on and its
// tool-call timeout (codexToolTimeout), and a
// value Codex does not know (an approval mode) is refused, which is what
// makes its silence about default_tools_approval_mode a check.
func TestRealCodexTakesServerConfig(t *testing.T) {
	codex := agentclitest.AgentCLI(t, "codex")
	dir := t.TempDir()
	env := agentclitest.Env(t, codex)
	list := func(args []string) ([]map[string]any, string, error) {
		cmd := exec.Command(codex, append(args, "mcp", "list", "--json")...)
		cmd.Dir, cmd.Env = dir, env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var servers []map[string]any
		if err == nil {
			err = json.Unmarshal(out, &servers)
		}
		return servers, stderr.String(), err
	}

	wire := BuiltinLaunchers()["codex"].wire("", "work-1")
	servers, stderr, err := list(wire)
	if err != nil || len(servers) != 1 {
		t.Fatalf("codex %q mcp list: %v %v\n%s", wire, err, servers, stderr)
	}
	b, _ := json.Marshal(servers[0])
	var s struct {
		Name      string
		Enabled   bool
		Transport struct {
			Type, Command string
			Args          []string
			EnvVars       []string `json:"env_vars"`
		}
		ToolTimeout *float64 `json:"tool_timeout_sec"`
	}
	json.Unmarshal(b, &s)
	if s.Name != mcpServerName || !s.Enabled || s.Transport.Type != "stdio" || s.Transport.Command != "git-codex" ||
		!slices.Equal(s.Transport.Args, []string{"mcp"}) || !slices.Equal(s.Transport.EnvVars, []string{"CODEX_INSTANCE", "CODEX_TOKEN", "TMUX", "TMUX_TMPDIR"}) {
		t.Fatalf("codex sees git codex's server as %s", b)
	}
	// Codex's limit on one tool call is past every wait of git codex's
	// own (null: Codex's default, 60 s)
	if s.ToolTimeout == nil || *s.ToolTimeout != codexToolTimeout || *s.ToolTimeout <= MaxTimeoutSeconds {
		t.Fatalf("codex's tool_timeout_sec for git codex's server: %s", b)
	}

	// the control: Codex checks default_tools_approval_mode's value
	bad := CodexServerArgs("x", "x", nil, nil, nil, "yes-please")
	if _, stderr, err := list(bad); err == nil || !strings.Contains(stderr, "default_tools_approval_mode") {
		t.Fatalf("codex took default_tools_approval_mode=yes-please: err %v\n%s", err, stderr)
	}
}

// Gemini CLI starts git codex's server from the settings git codex writes
// into the worktree, with the instance's identity from the pane's
// environment, in a folder it was never asked to trust: `gemini mcp list`
// shows it Connected with GEMINI_CLI_TRUST_WORKSPACE=true, which is what
// the spawn line's --skip-trust sets (gemini's own code; before a
// subcommand the flag sends gemini to its default command, so mcp list is
// given the variable). Without the trust it shows it Disabled: the
// control. The spawn line's flags are then taken by gemini itself: with
// --prompt=<a prompt that starts with a dash> in place of
// --prompt-interactive (which needs a terminal), its first stream-json
// line is the init and its second the prompt, whole.
func TestRealGeminiListsSpawnServer(t *testing.T) {
	gemini := agentclitest.AgentCLI(t, "gemini")
	srv := agentclitest.StandinServer(t)
	wt := t.TempDir()
	agentclitest.GitInit(t, wt)
	if err := writeGeminiSettings(wt); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(wt, geminiSettingsFile))
	if bytes.Contains(b, []byte("cxa_")) {
		t.Fatalf("the settings hold the token: %s", b)
	}
	env := agentclitest.Env(t, gemini, "CODEX_INSTANCE=work-g", "CODEX_TOKEN=cxa_gemini-token", "GEMINI_API_KEY=test-key",
		"PATH="+srv+string(os.PathListSeparator)+filepath.Dir(gemini)+string(os.PathListSeparator)+os.Getenv("PATH"))
	run := func(env []string, args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, gemini, args...)
		cmd.Dir, cmd.Env = wt, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("gemini %q: %v\n%s", args, err, out)
		}
		return string(out)
	}
	out := run(append(env, "GEMINI_CLI_TRUST_WORKSPACE=true"), "mcp", "list")
	if !strings.Contains(out, "git-codex: git-codex mcp (stdio) - Connected") {
		t.Fatalf("gemini mcp list (trusted for the session):\n%s", out)
	}
	envs := agentclitest.ServerEnvs(t, srv)
	if len(envs) == 0 || !strings.Contains(envs[0], "CODEX_INSTANCE=work-g\n") || !strings.Contains(envs[0], "CODEX_TOKEN=cxa_gemini-token\n") {
		t.Fatalf("git codex's server did not get the instance's identity: %q", envs)
	}

	// the control: an untrusted folder disables stdio servers
	if out := run(env, "mcp", "list"); !strings.Contains(out, "git-codex: git-codex mcp (stdio) - Disabled") {
		t.Fatalf("gemini mcp list without trust:\n%s", out)
	}

	// the spawn line's flags; the user settings pick the API key (else
	// gemini stops at its sign-in choice)
	home := strings.TrimPrefix(env[0], "HOME=")
	os.MkdirAll(filepath.Join(home, ".gemini"), 0o700)
	os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(`{"security":{"auth":{"selectedType":"gemini-api-key"}}}`), 0o600)
	l := BuiltinLaunchers()["gemini"]
	args := append(l.wire("", "work-g"), "--prompt=-dash, still the prompt", "--output-format", "stream-json")
	if first := firstLine(t, gemini, wt, env, args...); !bytes.Contains(first, []byte(`"type":"init"`)) {
		t.Fatalf("gemini %q: first line %s", args, first)
	}
	if !strings.Contains(l.commandLine("", "work-g", "/p"), `gemini --skip-trust --prompt-interactive="$(cat /p)"`) {
		t.Fatalf("gemini's spawn line: %s", l.commandLine("", "work-g", "/p"))
	}
}

// The settings git codex adds its server to keep what a repository's own
// .gemini/settings.json holds.
func TestGeminiSettingsKeepTheRepositorys(t *testing.T) {
	wt := t.TempDir()
	os.MkdirAll(filepath.Join(wt, ".gemini"), 0o755)
	os.WriteFile(filepath.Join(wt, geminiSettingsFile), []byte(`{"model":{"name":"m"},"mcpServers":{"other":{"command":"o"}}}`), 0o644)
	if err := writeGeminiSettings(wt); err != nil {
		t.Fatal(err)
	}
	var s struct {
		Model      map[string]any
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	b, _ := os.ReadFile(filepath.Join(wt, geminiSettingsFile))
	if err := json.Unmarshal(b, &s); err != nil || s.Model["name"] != "m" || s.MCPServers["other"] == nil || s.MCPServers["git-codex"]["trust"] != true {
		t.Fatalf("settings: %s (%v)", b, err)
	}
	if _, err := os.Stat(filepath.Join(wt, ".gemini", ".gitignore")); err == nil {
		t.Fatal("a .gitignore was added to the repository's own .gemini/")
	}
	os.WriteFile(filepath.Join(wt, geminiSettingsFile), []byte("{ // a comment\n}"), 0o644)
	if err := writeGeminiSettings(wt); err == nil {
		t.Fatal("settings with comments were overwritten")
	}
}

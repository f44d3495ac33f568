package instance

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
)

// A Launcher says how to start one agent CLI in a pane: the command line,
// how it gets its first prompt, and how it finds git codex's MCP server.
// The built-in ones use the real CLIs' interactive invocations; any other
// is configured with agent.<name>.command (and agent.<name>.prompt).
type Launcher struct {
	Name string `json:"name"`
	// Command is a shell command line, run by the pane's shell in the
	// instance's worktree.
	Command string `json:"command"`
	// Prompt is how the first prompt is passed: "arg" (appended as one
	// argument), "stdin" (the prompt file on standard input) or "file"
	// (the prompt file's path appended).
	Prompt string `json:"prompt"`
	// wire adds the arguments that attach git codex's MCP server, given
	// the path of the MCP config git codex wrote and the instance's id.
	wire func(mcpConfig, instance string) []string
	// Ready is when an instance it starts is up: ReadyMCP (its git codex
	// mcp answered initialize) for the built-in CLIs, ReadyStarted (its
	// pane survived the start check) for others unless agent.<name>.ready
	// says otherwise (instance_start.go).
	Ready string `json:"ready"`
	// env is set in the pane besides the instance's identity.
	env map[string]string
	// promptFlag, if set, is the option whose value the prompt is in
	// prompt mode "arg" (`--prompt-interactive=<prompt>`): a prompt
	// that starts with "-" is then never read as an option.
	promptFlag string
}

// Prompt modes.
var promptModes = []string{"arg", "stdin", "file"}

// The name git codex's MCP server has in every agent CLI's config.
const mcpServerName = "git-codex"

// BuiltinLaunchers are the agent CLIs git codex knows how to start and
// wire, each as its shipped interactive invocation takes it (checked
// against Claude Code 2.1.328, Codex CLI 0.169.0 and Gemini CLI 0.61.0;
// docs/DELEGATION.md has the table):
//   - claude: `claude --mcp-config <file> --allowedTools mcp__git-codex
//     -- "<prompt>"`. --mcp-config (like --allowedTools) takes several
//     values (`<configs...>`): without the `--` the prompt is read as a
//     second config file and claude exits 1. --allowedTools lets the
//     agent call git codex's tools without a person's yes (git codex's
//     permission policy checks each).
//   - codex: `codex -c mcp_servers.git-codex.command="git-codex" ...
//     "<prompt>"`. Codex hands MCP servers only an allow-list of
//     environment variables: env_vars adds CODEX_INSTANCE and CODEX_TOKEN
//     (set in the pane), so the token never appears on a command line,
//     and TMUX and TMUX_TMPDIR, by which tmux finds the server the pane
//     is on (without them the agent's request_review started its reviewer
//     on another tmux server, with that server's environment);
//     default_tools_approval_mode="approve" lets the agent call git
//     codex's tools without a person's yes (each call is still checked by
//     git codex's own permission policy); tool_timeout_sec lifts Codex's
//     60 s limit on a tool call (codexToolTimeout); --disable
//     shell_snapshot stops Codex writing its whole shell environment,
//     CODEX_TOKEN included, to ~/.codex/shell_snapshots/<thread>.sh
//     (mode 0644; a feature on by default at the pinned version).
//   - gemini: `gemini --skip-trust --prompt-interactive="<prompt>"`, with
//     git codex's server in the worktree's .gemini/settings.json (Gemini
//     CLI reads a system settings file only if it and every directory
//     above it are root's, and starts stdio MCP servers only in a trusted
//     folder: --skip-trust trusts the worktree git codex made, for this
//     session only; in the interactive CLI that flag comes too late for
//     the workspace's settings, which are read before it: the pane also
//     sets GEMINI_CLI_TRUST_WORKSPACE=true, which is what the flag sets,
//     without which Gemini CLI said "No MCP servers configured"). The
//     settings name $CODEX_INSTANCE and $CODEX_TOKEN,
//     which Gemini expands from its own environment when it loads them:
//     the file holds no secret (Gemini withholds variables named *TOKEN*
//     from MCP servers' inherited environment, so they are passed by name).
func BuiltinLaunchers() map[string]Launcher {
	return map[string]Launcher{
		"claude": {Name: "claude", Command: "claude", Prompt: "arg", Ready: ReadyMCP, wire: func(cfg, _ string) []string {
			return []string{"--mcp-config", cfg, "--allowedTools", "mcp__" + mcpServerName, "--"}
		}},
		"codex": {Name: "codex", Command: "codex", Prompt: "arg", Ready: ReadyMCP, wire: func(_, _ string) []string {
			return append(CodexServerArgs(mcpServerName, "git-codex", []string{"mcp"}, nil, []string{"CODEX_INSTANCE", "CODEX_TOKEN", "TMUX", "TMUX_TMPDIR"}, "approve"),
				"-c", "mcp_servers."+mcpServerName+".tool_timeout_sec="+strconv.Itoa(codexToolTimeout),
				"--disable", "shell_snapshot")
		}},
		"gemini": {Name: "gemini", Command: "gemini", Prompt: "arg", Ready: ReadyMCP, promptFlag: "--prompt-interactive",
			env: map[string]string{"GEMINI_CLI_TRUST_WORKSPACE": "true"}, wire: func(string, string) []string {
				return []string{"--skip-trust"}
			}},
	}
}

// codexToolTimeout is the tool_timeout_sec of git codex's server in a
// spawned Codex CLI. Codex gives up on an MCP tool call after 60 s by
// default, and git codex's tools may rightly take longer: request_review
// waits for the reviewer it spawns to connect (instance.start_timeout, 60
// s by default), agent_query for a delegated turn (timeout_seconds, up to
// 7 days). git codex bounds each of its calls itself and answers with a
// structured error at its limit, so Codex's limit is set past the longest
// of them: it never cuts one short, leaving an effect without its record.
const codexToolTimeout = MaxTimeoutSeconds + 3600

// CodexServerArgs are the -c overrides that give Codex CLI one stdio MCP
// server (its config.toml's [mcp_servers.<name>] table): command, args,
// env (values passed to the server), env_vars (names of Codex's own
// environment passed on) and default_tools_approval_mode (auto, prompt,
// writes or approve; "" leaves Codex's default).
func CodexServerArgs(name, command string, args []string, env map[string]string, envVars []string, approval string) []string {
	key := "mcp_servers." + tomlKey(name)
	if args == nil {
		args = []string{}
	}
	out := []string{"-c", key + ".command=" + tomlString(command), "-c", key + ".args=" + tomlArray(args)}
	if len(env) > 0 {
		names := make([]string, 0, len(env))
		for k := range env {
			names = append(names, k)
		}
		slices.Sort(names)
		var kv []string
		for _, k := range names {
			kv = append(kv, tomlKey(k)+"="+tomlString(env[k]))
		}
		out = append(out, "-c", key+".env={"+strings.Join(kv, ",")+"}")
	}
	if len(envVars) > 0 {
		out = append(out, "-c", key+".env_vars="+tomlArray(envVars))
	}
	if approval != "" {
		out = append(out, "-c", key+".default_tools_approval_mode="+tomlString(approval))
	}
	return out
}

// tomlString is s as a TOML basic string (JSON's escapes are TOML's, but
// for the \u escapes of characters JSON leaves raw, which TOML also takes
// raw except for control characters: those are refused on input).
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// tomlArray is a TOML array of strings.
func tomlArray(list []string) string {
	parts := make([]string, len(list))
	for i, s := range list {
		parts[i] = tomlString(s)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// tomlKey is a key as TOML takes it in a dotted path: bare if it can be.
func tomlKey(k string) string {
	if k != "" && strings.IndexFunc(k, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}) < 0 {
		return k
	}
	return tomlString(k)
}

// instanceKeys are the settings of instances and the review loop.
func instanceKeys() []tools.ConfigKey {
	return []tools.ConfigKey{
		{Name: "agent.default", Kind: "string", Default: "claude", Local: true, Doc: "the launcher `spawn` uses without --agent: claude, codex, gemini, or one set with agent.<name>.command (this machine's: git config codex.agent.default)"},
		{Name: "worktree.dir", Kind: "string", Default: "", Local: true, Doc: "where instances' worktrees go; empty: <repository>.codex-worktrees beside the repository (this machine's: git config codex.worktree.dir)"},
		{Name: "tmux.socket", Kind: "string", Default: "", Local: true, Doc: "tmux socket name or path for agents' sessions; empty: the tmux server of the calling environment (this machine's: git config codex.tmux.socket)"},
		{Name: "instance.start_timeout", Kind: "int", Default: defaultStartTimeout, Doc: "seconds spawn waits for an agent to connect to git codex (its git codex mcp answering initialize) before it records the instance FAILED with what its pane shows"},
		{Name: "review.max_iterations", Kind: "int", Default: 3, Doc: "reviews a coding agent may request before request_review refuses with REVIEW_LIMIT_EXCEEDED"},
		{Name: "review.auto_abandon_after", Kind: "int", Default: 3, Doc: "needs_work reviews after which a coding agent is ABANDONED as the last is delivered (its session killed, its work kept for cleanup to save); 0: never. It counts the same reviews as review.max_iterations: at the default (equal), a coder whose every review said needs_work is abandoned, one that had any other verdict reaches the limit and may open a pull request; above review.max_iterations it can never trigger"},
		{Name: "review.timeout_hours", Kind: "int", Default: 24, Doc: "hours after which `reap` terminates a review still running"},
	}
}

// launcherKey describes agent.<name>.command and agent.<name>.prompt, the
// keys of a launcher someone defines.
func launcherKey(key string) (tools.ConfigKey, bool) {
	rest, ok := strings.CutPrefix(key, "agent.")
	if !ok {
		return tools.ConfigKey{}, false
	}
	name, field, ok := strings.Cut(rest, ".")
	if !ok || !tools.ValidAgentID(name) || strings.Contains(name, ".") {
		return tools.ConfigKey{}, false
	}
	switch field {
	case "command":
		def := ""
		if b, ok := BuiltinLaunchers()[name]; ok {
			def = b.Command
		}
		return tools.ConfigKey{Name: key, Kind: "string", Default: def, Local: true,
			Doc: "the command line that starts launcher " + name + " in an instance's pane (this machine's: git config " + tools.GitConfigName(key) + ")"}, true
	case "prompt":
		return tools.ConfigKey{Name: key, Kind: "string", Default: "arg", OneOf: promptModes, Local: true,
			Doc: "how launcher " + name + " gets its first prompt: arg, stdin or file (this machine's: git config " + tools.GitConfigName(key) + ")"}, true
	case "ready":
		def := ReadyStarted
		if b, ok := BuiltinLaunchers()[name]; ok {
			def = b.Ready
		}
		return tools.ConfigKey{Name: key, Kind: "string", Default: def, OneOf: readyModes, Local: true,
			Doc: "when an instance of launcher " + name + " is up: mcp (its git codex mcp answered initialize, or it called a tool) or started (its pane still runs after a moment) (this machine's: git config " + tools.GitConfigName(key) + ")"}, true
	}
	return tools.ConfigKey{}, false
}

// LauncherFor finds a launcher by name ("" for agent.default): a command set
// in git config wins over a built-in one of the same name. Launchers are
// this machine's settings: a command line in the shared state is never
// run (localconfig.go), and an unset command is the built-in default.
func LauncherFor(c *tools.Config, name string) (Launcher, error) {
	if err := c.LocalErr(); err != nil {
		return Launcher{}, tools.Errorf(tools.ConfigInvalid, "cannot read this machine's git config for the launcher: %v", err)
	}
	if name == "" {
		name = c.StringValue("agent.default")
	}
	l, builtin := BuiltinLaunchers()[name]
	cmdKey, _ := launcherKey("agent." + name + ".command")
	var cmd string
	if v, ok := c.LocalValue(cmdKey); ok && json.Unmarshal(v, &cmd) == nil && strings.TrimSpace(cmd) != "" {
		// a built-in launcher pointed at another binary keeps its wiring:
		// the binary speaks that CLI's contract (an empty command is
		// none: the built-in's own, as when it is unset)
		if !builtin {
			l = Launcher{Name: name, Prompt: "arg", Ready: ReadyStarted}
		}
		l.Command, builtin = cmd, true
	}
	if !builtin {
		e := tools.Errorf(tools.InvalidInput, "no launcher %q on this machine; use claude, codex or gemini, or define one with `git config %s '<command line>'` (or `git codex config set agent.%s.command '<command line>'`)",
			name, tools.GitConfigName(cmdKey.Name), name).With("agent", name)
		if _, shared := c.Entry(cmdKey.Name); shared {
			e.Message += fmt.Sprintf("; the shared state's %s is ignored: launchers are this machine's settings", cmdKey.Name)
			e = e.With("ignored", cmdKey.Name)
		}
		return Launcher{}, e
	}
	if promptKey, _ := launcherKey("agent." + name + ".prompt"); c.HasLocal(promptKey) {
		l.Prompt = c.StringValue(promptKey.Name)
	}
	if readyKey, _ := launcherKey("agent." + name + ".ready"); c.HasLocal(readyKey) {
		l.Ready = c.StringValue(readyKey.Name)
	}
	return l, nil
}

// program is the launcher's executable: the first word of its command.
func (l Launcher) program() string {
	f := strings.Fields(l.Command)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// CheckProgram fails unless the launcher's program can be found (on PATH,
// or as a path), so that a spawn with a missing CLI is refused before
// anything is made.
func (l Launcher) CheckProgram(lookPath func(string) (string, error)) error {
	p := l.program()
	if p == "" {
		return tools.Errorf(tools.InvalidInput, "launcher %q has an empty command; set it with `git config %s '<command line>'`", l.Name, tools.GitConfigName("agent."+l.Name+".command")).With("agent", l.Name)
	}
	if _, err := lookPath(p); err != nil {
		return tools.Errorf(tools.InvalidInput, "launcher %q runs %q, which is not installed or not on PATH; install it or point git config %s at it", l.Name, p, tools.GitConfigName("agent."+l.Name+".command")).
			With("agent", l.Name).With("program", p)
	}
	return nil
}

// commandLine is the shell command line the pane runs: the launcher's
// command, git codex's MCP wiring, and the prompt as the launcher takes
// it (promptFile holds it).
func (l Launcher) commandLine(mcpConfig, instance, promptFile string) string {
	parts := []string{l.Command}
	if l.wire != nil {
		for _, a := range l.wire(mcpConfig, instance) {
			parts = append(parts, shellQuote(a))
		}
	}
	switch l.Prompt {
	case "stdin":
		return strings.Join(parts, " ") + " < " + shellQuote(promptFile)
	case "file":
		parts = append(parts, shellQuote(promptFile))
	default:
		arg := `"$(cat ` + shellQuote(promptFile) + `)"`
		if l.promptFlag != "" {
			arg = shellQuote(l.promptFlag+"=") + arg
		}
		parts = append(parts, arg)
	}
	return strings.Join(parts, " ")
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@,+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Files git codex writes into an instance's worktree live in .git-codex/,
// whose own .gitignore ignores everything in it (itself included): they
// are never committed by accident, and nothing in the repository's shared
// info/exclude has to change. The folder was .codex/ until Codex CLI
// took that name for a project's own settings (.codex/config.toml); no
// agent CLI reads .git-codex/. Worktrees made before keep their .codex/:
// its files are read only when the agent starts, and cleanup removes the
// worktree with them, so nothing needs moving.
const instanceDir = ".git-codex"

// writeInstanceFiles writes the MCP config (Claude Code's format, which
// most clients read) and the first prompt into the worktree's .git-codex/,
// and returns their paths. The MCP config holds no secret: its server's
// env names ${CODEX_INSTANCE} and ${CODEX_TOKEN}, which Claude Code
// expands from its own environment (the pane's, where spawn puts both)
// when it loads an --mcp-config file (checked in its shipped code and on
// the binary: tools.TestRealClaudeTakesSpawnLine, agents_claude_auth.txtar).
// The token stays out of the worktree, where the agent's file tools, a
// stray `git add -f` or a copy of the directory would reach it.
func writeInstanceFiles(worktree, prompt string) (mcpConfig, promptFile string, err error) {
	dir := filepath.Join(worktree, instanceDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", err
	}
	server := map[string]any{"command": "git-codex", "args": []string{"mcp"}, "env": map[string]string{"CODEX_INSTANCE": "${CODEX_INSTANCE}", "CODEX_TOKEN": "${CODEX_TOKEN}"}}
	mcp, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{mcpServerName: server}}, "", "  ")
	files := []struct {
		name string
		data []byte
	}{
		{".gitignore", []byte("# written by git codex for this instance; never committed\n*\n")},
		{"mcp.json", append(mcp, '\n')},
		{"prompt.md", []byte(prompt)},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o600); err != nil {
			return "", "", err
		}
	}
	return filepath.Join(dir, "mcp.json"), filepath.Join(dir, "prompt.md"), nil
}

// geminiSettingsFile is where Gemini CLI reads a workspace's settings.
const geminiSettingsFile = ".gemini/settings.json"

// writeGeminiSettings adds git codex's MCP server to the worktree's
// .gemini/settings.json, the one settings file of Gemini CLI that is the
// worktree's own. The server's environment names $CODEX_INSTANCE and
// $CODEX_TOKEN (Gemini expands them from the pane's environment), so the
// file holds no secret; "trust": true lets the agent call git codex's
// tools without a confirmation (git codex's permission policy still
// checks each). A .gemini/ that git codex makes gets a .gitignore that
// ignores it all; one the repository already has keeps its settings, with
// git-codex's server added (the change shows in git status).
func writeGeminiSettings(worktree string) error {
	dir := filepath.Join(worktree, ".gemini")
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("# written by git codex for this instance; never committed\n*\n"), 0o600); err != nil {
			return err
		}
	}
	path := filepath.Join(worktree, geminiSettingsFile)
	settings := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &settings); err != nil {
			return fmt.Errorf("%s is not plain JSON (git codex adds its MCP server there): %w", geminiSettingsFile, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	servers, _ := settings["mcpServers"].(map[string]any)
	if servers == nil {
		servers = map[string]any{}
	}
	servers[mcpServerName] = map[string]any{
		"command": "git-codex", "args": []string{"mcp"}, "trust": true,
		"env": map[string]string{"CODEX_INSTANCE": "$CODEX_INSTANCE", "CODEX_TOKEN": "$CODEX_TOKEN"},
	}
	settings["mcpServers"] = servers
	b, _ := json.MarshalIndent(settings, "", "  ")
	return os.WriteFile(path, append(b, '\n'), 0o600)
}

// LauncherCommand is the command line this machine runs for launcher name
// (its git config codex.agent.<name>.command, else the built-in's), for
// commands that run an agent CLI's own subcommands (setup, doctor).
func LauncherCommand(sn *gitstate.Snapshot, keys *tools.ConfigKeys, name string) (string, error) {
	cfg, err := tools.LoadConfig(sn, keys)
	if err != nil {
		return "", err
	}
	l, err := LauncherFor(cfg, name)
	if err != nil {
		return "", err
	}
	return l.Command, nil
}

// MainWorkTree is the repository's main work tree: where Claude Code and
// Codex CLI look up the trust of every worktree of it.
func MainWorkTree(r tools.Dirs) string { return mainWorkTree(r) }

// MaxTimeoutSeconds is the longest wait git codex lets an agent's tool
// call or a delegated turn take: a week. A launcher's MCP tool timeout is
// set above it, so the agent CLI never gives up on a call git codex still
// waits for.
const MaxTimeoutSeconds = 7 * 24 * 3600

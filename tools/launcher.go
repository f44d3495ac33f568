package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A launcher says how to start one agent CLI in a pane: the command line,
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
}

// Prompt modes.
var promptModes = []string{"arg", "stdin", "file"}

// builtinLaunchers are the agent CLIs git codex knows how to start and
// wire, each as its own interactive invocation documents it:
//   - claude: `claude --mcp-config <file> "<prompt>"` (Claude Code reads
//     MCP servers from the JSON file; the prompt starts the session);
//   - codex: `codex -c mcp_servers.<name>.command=... "<prompt>"` (Codex
//     has no config-file flag; -c overrides its config.toml keys);
//   - gemini: `gemini --prompt-interactive "<prompt>"` (Gemini CLI reads
//     mcpServers from settings; the system settings file it is given via
//     GEMINI_CLI_SYSTEM_SETTINGS_PATH, set in the pane's environment).
func builtinLaunchers() map[string]Launcher {
	return map[string]Launcher{
		"claude": {Name: "claude", Command: "claude", Prompt: "arg", wire: func(cfg, _ string) []string {
			return []string{"--mcp-config", cfg}
		}},
		"codex": {Name: "codex", Command: "codex", Prompt: "arg", wire: func(_, instance string) []string {
			return []string{
				"-c", `mcp_servers.git-codex.command="git-codex"`,
				"-c", `mcp_servers.git-codex.args=["mcp"]`,
				"-c", fmt.Sprintf(`mcp_servers.git-codex.env={CODEX_INSTANCE=%q}`, instance),
			}
		}},
		"gemini": {Name: "gemini", Command: "gemini", Prompt: "arg", wire: func(string, string) []string {
			return []string{"--prompt-interactive"}
		}},
	}
}

// instanceKeys are the settings of instances and the review loop.
func instanceKeys() []configKey {
	return []configKey{
		{Name: "agent.default", Kind: "string", Default: "claude", Local: true, Doc: "the launcher `spawn` uses without --agent: claude, codex, gemini, or one set with agent.<name>.command (this machine's: git config codex.agent.default)"},
		{Name: "worktree.dir", Kind: "string", Default: "", Local: true, Doc: "where instances' worktrees go; empty: <repository>.codex-worktrees beside the repository (this machine's: git config codex.worktree.dir)"},
		{Name: "tmux.socket", Kind: "string", Default: "", Local: true, Doc: "tmux socket name or path for agents' sessions; empty: the tmux server of the calling environment (this machine's: git config codex.tmux.socket)"},
		{Name: "review.max_iterations", Kind: "int", Default: 3, Doc: "reviews a coding agent may request before request_review refuses with REVIEW_LIMIT_EXCEEDED"},
		{Name: "review.auto_abandon_after", Kind: "int", Default: 5, Doc: "needs_work reviews after which `reap` abandons a coding agent"},
		{Name: "review.timeout_hours", Kind: "int", Default: 24, Doc: "hours after which `reap` terminates a review still running"},
	}
}

// launcherKey describes agent.<name>.command and agent.<name>.prompt, the
// keys of a launcher someone defines.
func launcherKey(key string) (configKey, bool) {
	rest, ok := strings.CutPrefix(key, "agent.")
	if !ok {
		return configKey{}, false
	}
	name, field, ok := strings.Cut(rest, ".")
	if !ok || !validAgentID(name) || strings.Contains(name, ".") {
		return configKey{}, false
	}
	switch field {
	case "command":
		def := ""
		if b, ok := builtinLaunchers()[name]; ok {
			def = b.Command
		}
		return configKey{Name: key, Kind: "string", Default: def, Local: true,
			Doc: "the command line that starts launcher " + name + " in an instance's pane (this machine's: git config " + gitConfigName(key) + ")"}, true
	case "prompt":
		return configKey{Name: key, Kind: "string", Default: "arg", oneOf: promptModes, Local: true,
			Doc: "how launcher " + name + " gets its first prompt: arg, stdin or file (this machine's: git config " + gitConfigName(key) + ")"}, true
	}
	return configKey{}, false
}

// launcher finds a launcher by name ("" for agent.default): a command set
// in git config wins over a built-in one of the same name. Launchers are
// this machine's settings: a command line in the shared state is never
// run (localconfig.go), and an unset command is the built-in default.
func (c *Config) launcher(name string) (Launcher, error) {
	if err := c.localErr(); err != nil {
		return Launcher{}, Errorf(ConfigInvalid, "cannot read this machine's git config for the launcher: %v", err)
	}
	if name == "" {
		name = c.stringValue("agent.default")
	}
	l, builtin := builtinLaunchers()[name]
	cmdKey, _ := launcherKey("agent." + name + ".command")
	var cmd string
	if v, ok := c.localValue(cmdKey); ok && json.Unmarshal(v, &cmd) == nil && strings.TrimSpace(cmd) != "" {
		// a built-in launcher pointed at another binary keeps its wiring:
		// the binary speaks that CLI's contract (an empty command is
		// none: the built-in's own, as when it is unset)
		if !builtin {
			l = Launcher{Name: name, Prompt: "arg"}
		}
		l.Command, builtin = cmd, true
	}
	if !builtin {
		e := Errorf(InvalidInput, "no launcher %q on this machine; use claude, codex or gemini, or define one with `git config %s '<command line>'` (or `git codex config set agent.%s.command '<command line>'`)",
			name, gitConfigName(cmdKey.Name), name).With("agent", name)
		if _, shared := c.set(cmdKey.Name); shared {
			e.Message += fmt.Sprintf("; the shared state's %s is ignored: launchers are this machine's settings", cmdKey.Name)
			e = e.With("ignored", cmdKey.Name)
		}
		return Launcher{}, e
	}
	if promptKey, _ := launcherKey("agent." + name + ".prompt"); c.hasLocal(promptKey) {
		l.Prompt = c.stringValue(promptKey.Name)
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

// checkProgram fails unless the launcher's program can be found (on PATH,
// or as a path), so that a spawn with a missing CLI is refused before
// anything is made.
func (l Launcher) checkProgram(lookPath func(string) (string, error)) error {
	p := l.program()
	if p == "" {
		return Errorf(InvalidInput, "launcher %q has an empty command; set it with `git config %s '<command line>'`", l.Name, gitConfigName("agent."+l.Name+".command")).With("agent", l.Name)
	}
	if _, err := lookPath(p); err != nil {
		return Errorf(InvalidInput, "launcher %q runs %q, which is not installed or not on PATH; install it or point git config %s at it", l.Name, p, gitConfigName("agent."+l.Name+".command")).
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
		parts = append(parts, `"$(cat `+shellQuote(promptFile)+`)"`)
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

// Files git codex writes into an instance's worktree live in .codex/,
// whose own .gitignore ignores everything in it (itself included): they
// are never committed by accident, and nothing in the repository's shared
// info/exclude has to change.
const instanceDir = ".codex"

// writeInstanceFiles writes the MCP config (Claude Code's format, which
// most clients read), the Gemini CLI settings and the first prompt into
// the worktree's .codex/, and returns their paths. The MCP configs carry
// the instance's credential (CODEX_TOKEN): readable by its owner only, and
// ignored by git like everything in .codex/.
func writeInstanceFiles(worktree, instance, token, prompt string) (mcpConfig, geminiSettings, promptFile string, err error) {
	dir := filepath.Join(worktree, instanceDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", "", err
	}
	server := map[string]any{"command": "git-codex", "args": []string{"mcp"}, "env": map[string]string{"CODEX_INSTANCE": instance, "CODEX_TOKEN": token}}
	mcp, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{"git-codex": server}}, "", "  ")
	files := []struct {
		name string
		data []byte
	}{
		{".gitignore", []byte("# written by git codex for this instance; never committed\n*\n")},
		{"mcp.json", append(mcp, '\n')},
		{"gemini-settings.json", append(mcp, '\n')},
		{"prompt.md", []byte(prompt)},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o600); err != nil {
			return "", "", "", err
		}
	}
	return filepath.Join(dir, "mcp.json"), filepath.Join(dir, "gemini-settings.json"), filepath.Join(dir, "prompt.md"), nil
}

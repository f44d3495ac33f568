package testscripts

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

// fakeClaude stands in for Claude Code's interactive CLI in a tmux pane,
// keeping the parts of its contract git codex relies on:
//
//	claude [--mcp-config <file>...] [--allowedTools <tool>...] [--model <m>] [--] [prompt]
//
// --mcp-config takes every value up to the next option, as Claude Code's
// does (checked on the real one in tools.TestRealClaudeTakesSpawnLine and
// agents_claude.txtar), and checks that each is JSON with an "mcpServers"
// object (a missing or bad file is an error and exit 1), shows
// the initial prompt as the first user message, then reads one message
// per line from the terminal, at an input line like Claude Code's ("❯ "
// under a rule): a line starting with "!" runs the rest in
// the shell (Claude Code's bash mode) — which is how tests make the
// "agent" commit code and call git codex tools — and "/exit" quits.
// Anything else is answered with a fixed line.
func fakeClaude() int {
	args := os.Args[1:]
	for _, a := range args {
		if a == "-p" || a == "--print" {
			return fakeClaudeHeadless(args)
		}
	}
	var prompt string
	var configs []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			// the end of the options: the prompt follows
			if i+1 < len(args) {
				prompt = args[i+1]
			}
			i = len(args)
		case a == "--mcp-config":
			// variadic, as Claude Code's: every value up to the next
			// option is a config file (a prompt there is read as one)
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				if err := checkMCPConfig(args[i]); err != nil {
					fmt.Fprintf(os.Stderr, "Error: Invalid MCP configuration:\n%v\n", err)
					return 1
				}
				configs = append(configs, args[i])
			}
		case a == "--allowedTools" || a == "--allowed-tools":
			// variadic too
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
			}
		case a == "--model" && i+1 < len(args):
			i++
		case strings.HasPrefix(a, "-"):
			fmt.Fprintf(os.Stderr, "error: unknown option '%s'\n", a)
			return 1
		default:
			prompt = a
		}
	}
	for _, cfg := range configs {
		stop := startMCPServers(cfg)
		defer stop()
	}
	fmt.Printf("* fake-claude ready as %s\n", os.Getenv("CODEX_INSTANCE"))
	if prompt != "" {
		first, _, _ := strings.Cut(prompt, "\n")
		fmt.Printf("> %s\n(fake) working on it\n", first)
	}
	// its input line, as Claude Code's looks (git codex types a nudge
	// only there: tools' atInput)
	prompt = "────────\n❯ "
	fmt.Print(prompt)
	in := bufio.NewScanner(os.Stdin)
	for ; in.Scan(); fmt.Print(prompt) {
		line := strings.TrimSpace(in.Text())
		switch {
		case line == "/exit":
			return 0
		case strings.HasPrefix(line, "!"):
			// while the command runs the bottom line says so, as Claude
			// Code's spinner does ("esc to interrupt"), and goes away
			// when it ends: what a watcher reads as "busy, not at its
			// input". The command's output follows it.
			fmt.Print("✻ Working… (esc to interrupt)")
			var out bytes.Buffer
			cmd := exec.Command("sh", "-c", strings.TrimPrefix(line, "!"))
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			fmt.Print("\r\033[2K")
			os.Stdout.Write(out.Bytes())
			fmt.Printf("(fake) bash exited: %v\n", err)
		case line != "":
			fmt.Printf("(fake) noted: %s\n", line)
		}
	}
	return 0
}

// startMCPServers starts the stdio MCP servers of a config file as Claude
// Code does, initializes each (printing whether it connected) and returns
// what stops them: their standard input closed.
func startMCPServers(path string) (stop func()) {
	b, _ := os.ReadFile(path)
	var cfg struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	json.Unmarshal(b, &cfg)
	var stops []func()
	for name, srv := range cfg.MCPServers {
		cmd := exec.Command(srv.Command, srv.Args...)
		cmd.Env = os.Environ()
		for k, v := range srv.Env {
			// ${VAR} and ${VAR:-default} are expanded from claude's own
			// environment, as Claude Code does (git codex's config names
			// ${CODEX_INSTANCE} and ${CODEX_TOKEN})
			cmd.Env = append(cmd.Env, k+"="+expandEnv(v))
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			fmt.Printf("* MCP server %s failed: %v\n", name, err)
			continue
		}
		fmt.Fprintln(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fake-claude","version":"1"}}}`)
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || !strings.Contains(line, `"result"`) {
			in.Close()
			cmd.Wait()
			fmt.Printf("* MCP server %s failed: %s %s\n", name, strings.TrimSpace(line), strings.TrimSpace(stderr.String()))
			continue
		}
		fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		fmt.Printf("* MCP server %s connected\n", name)
		stops = append(stops, func() { in.Close(); cmd.Wait() })
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}

// envReference is a ${VAR} or ${VAR:-default} in an MCP config's values.
var envReference = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}`)

// expandEnv expands ${VAR} and ${VAR:-default} from the environment as
// Claude Code does: an unset variable takes its default, and without one
// stays as written.
func expandEnv(s string) string {
	return envReference.ReplaceAllStringFunc(s, func(ref string) string {
		m := envReference.FindStringSubmatch(ref)
		if v, ok := os.LookupEnv(m[1]); ok {
			return v
		}
		if m[2] != "" {
			return m[2][2:]
		}
		return ref
	})
}

func checkMCPConfig(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return err
	}
	if cfg.MCPServers == nil {
		return fmt.Errorf("%s: no mcpServers object", path)
	}
	return nil
}

package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
	"github.com/urfave/cli/v2"
)

// git codex setup adds git codex's MCP server to a person's own agent CLI
// with that CLI's own `mcp add`, at a scope that is the person's and never
// in the repository, and checks that it connects with that CLI's own `mcp
// list`:
//
//   - claude: `claude mcp add --scope local` (~/.claude.json, this user and
//     this project only). A project-scope .mcp.json is committed with the
//     repository and stays "Pending approval" until someone approves it in
//     an interactive session; local scope needs no approval and keeps an
//     agent's token (--as) out of every file git sees.
//   - codex: `codex mcp add` (~/.codex/config.toml). Codex CLI's servers are
//     the user's, in every project: the server acts for whoever runs it
//     where it runs, so --as (an agent's identity and token) is refused.
//   - gemini: `gemini mcp add --scope user` (~/.gemini/settings.json). The
//     project scope writes .gemini/settings.json into the work tree, where
//     it may be committed; --as is refused as for codex. Gemini CLI starts
//     stdio servers only in folders the person trusts: mcp list then says
//     Disabled, and setup says how to trust the folder.
//
// The server is named by this binary's absolute path, so it starts
// whatever PATH the CLI was given.

// setupCLIs are the agent CLIs setup and doctor know.
var setupCLIs = []string{"claude", "codex", "gemini"}

func (e *env) setupCommand() *cli.Command {
	return &cli.Command{
		Name:      "setup",
		Usage:     "add git codex's MCP server to your own Claude Code, Codex CLI or Gemini CLI, and check that it connects",
		ArgsUsage: "claude|codex|gemini",
		Description: "Runs the CLI's own `mcp add` in the repository's main work tree, at a scope that is yours and\n" +
			"never committed (claude: local, in ~/.claude.json; codex: ~/.codex/config.toml; gemini: user,\n" +
			"in ~/.gemini/settings.json), then the CLI's own `mcp list` to check that it connects. The server\n" +
			"acts as you (human:<git user.email>); with --as <agent> and its token (--token or CODEX_TOKEN),\n" +
			"as that agent (claude only: the others keep MCP servers per user, not per project).",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "print the commands, run nothing"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 || !isSetupCLI(c.Args().First()) {
				return usageError{err: fmt.Errorf("setup takes one of: %s", strings.Join(setupCLIs, ", ")), help: "git codex setup"}
			}
			return e.setup(c, c.Args().First(), c.Bool("dry-run"))
		},
	}
}

func isSetupCLI(name string) bool {
	for _, n := range setupCLIs {
		if n == name {
			return true
		}
	}
	return false
}

func (e *env) setup(c *cli.Context, name string, dryRun bool) error {
	o, st, err := e.origin(c)
	if err != nil {
		return err
	}
	defer st.Close()
	ctx := c.Context
	prog, err := e.launcherArgv(ctx, st, name)
	if err != nil {
		return err
	}
	root := instance.MainWorkTree(st)
	env := map[string]string{}
	if !tools.IsHuman(o.ID) {
		if name != "claude" {
			return tools.Errorf(tools.InvalidInput, "--as works with claude only: %s keeps MCP servers per user, not per project, so an agent's identity and token there would act in every repository; run `git codex setup %s` as yourself", name, name)
		}
		if o.Token == "" {
			return tools.Errorf(tools.InvalidInput, "give %s's token (--token or CODEX_TOKEN); `git codex agent rotate-token %s` issues a new one", o.ID, o.ID)
		}
		env["CODEX_INSTANCE"], env["CODEX_TOKEN"] = o.ID, o.Token
	}
	// the same check the server makes when it starts: refuse now, not in
	// the CLI's mcp list
	o.AgentEnv = false
	if _, refusal := e.reg.CheckServer(ctx, st, o); refusal != nil {
		return refusal
	}
	self, err := os.Executable()
	if err != nil {
		return tools.Errorf(tools.InternalError, "cannot find this program's path: %v", err)
	}
	if p, err := filepath.EvalSymlinks(self); err == nil {
		self = p
	}
	var remove, add []string
	switch name {
	case "claude":
		remove = []string{"mcp", "remove", "--scope", "local", "git-codex"}
		// -e takes several values (<env...>): the name goes before it,
		// and -- ends them
		add = []string{"mcp", "add", "--scope", "local", "git-codex"}
		for _, k := range sortedKeys(env) {
			add = append(add, "-e", k+"="+env[k])
		}
		add = append(add, "--", self, "mcp")
	case "codex":
		remove = []string{"mcp", "remove", "git-codex"}
		add = []string{"mcp", "add", "git-codex", "--", self, "mcp"}
	case "gemini":
		// no remove first: Gemini CLI's mcp add replaces a server of the
		// same name in the same scope ("MCP server ... updated in user
		// settings", its bundle's addMcpServer), and each run of it costs
		// seconds (below)
		add = []string{"mcp", "add", "--scope", "user", "git-codex", self, "mcp"}
	}
	cliEnv := oneShotEnv(name)
	show := func(args []string) string {
		words := append([]string{}, prog...)
		for _, a := range args {
			if strings.HasPrefix(a, "CODEX_TOKEN=") {
				a = "CODEX_TOKEN=[token]"
			}
			words = append(words, a)
		}
		return strings.Join(words, " ")
	}
	if dryRun {
		if remove != nil {
			fmt.Fprintf(e.stdout, "(cd %s && %s)\n", root, show(remove))
		}
		fmt.Fprintf(e.stdout, "(cd %s && %s)\n", root, show(add))
		return nil
	}
	// a server of that name from before (or from the README's recipe) is
	// replaced: its absence is no error
	if remove != nil {
		runCLI(ctx, prog, root, remove, cliEnv...)
	}
	if out, err := runCLI(ctx, prog, root, add, cliEnv...); err != nil {
		return tools.Errorf(tools.InternalError, "%s failed: %v: %s", show(add), err, strings.TrimSpace(out))
	}
	fmt.Fprintf(e.stdout, "added: %s\n", show(add))
	line, ok, hint := verifyServer(ctx, name, prog, root, self, env, cliEnv)
	if ok {
		fmt.Fprintf(e.stdout, "connected: %s\n", line)
		return nil
	}
	return fmt.Errorf("%s added git codex's server, but it does not connect: %s%s", name, line, hint)
}

// launcherArgv is the agent CLI's program and arguments on this machine.
func (e *env) launcherArgv(ctx context.Context, st *gitstate.Store, name string) ([]string, error) {
	var cmdline string
	err := st.View(ctx, func(sn *gitstate.Snapshot) error {
		var err error
		cmdline, err = instance.LauncherCommand(sn, e.reg.ConfigKeys(), name)
		return err
	})
	if err != nil {
		return nil, tools.StoreError(err)
	}
	argv := strings.Fields(cmdline)
	if len(argv) == 0 {
		return nil, tools.Errorf(tools.InvalidInput, "launcher %s has no command", name)
	}
	if _, err := exec.LookPath(argv[0]); err != nil {
		return nil, tools.Errorf(tools.InvalidInput, "%s (%s) is not installed or not on PATH; install it, or point git config codex.agent.%s.command at it", name, argv[0], name)
	}
	return argv, nil
}

// oneShotEnv is the environment that spares an agent CLI's one-shot
// subcommand (mcp add, mcp list) work it does only for a session. Gemini
// CLI starts by relaunching itself in a child node process with a larger
// heap (its bundle's gemini.js: getSpawnConfig), so every run loads its
// 96 MB bundle twice; GEMINI_CLI_NO_RELAUNCH=true, which that relaunch
// sets for its child, makes it run in the first process. Measured on the
// 2-core test machine at load 12: gemini mcp list 10.5 s (2.5 s CPU) ->
// 7.4 s (1.6 s CPU); add 8.0 -> 6.7 s. A pane's session (spawn) keeps the
// relaunch and its heap.
func oneShotEnv(name string) []string {
	if name == "gemini" {
		return []string{"GEMINI_CLI_NO_RELAUNCH=true"}
	}
	return nil
}

// runCLI runs an agent CLI's subcommand in dir and returns what it
// printed. Two minutes is far above what a run takes (Gemini CLI, the
// slowest: 6-12 s at load 12 on 2 cores, agents_gemini); it bounds a CLI
// that hangs.
func runCLI(ctx context.Context, prog []string, dir string, args []string, env ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog[0], append(prog[1:len(prog):len(prog)], args...)...)
	cmd.Dir, cmd.Stdin = dir, nil
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// verifyServer asks the CLI whether git codex's server connects: its own
// mcp list (claude and gemini start each server to say so; codex lists
// its config without starting anything, so git codex starts the server
// as Codex CLI will, and initializes it). It returns the line that says
// so, and what to do if it does not.
func verifyServer(ctx context.Context, name string, prog []string, root, self string, env map[string]string, cliEnv []string) (line string, ok bool, hint string) {
	switch name {
	case "claude", "gemini":
		out, _ := runCLI(ctx, prog, root, []string{"mcp", "list"}, cliEnv...)
		for _, l := range strings.Split(out, "\n") {
			if i := strings.Index(l, "git-codex:"); i >= 0 {
				line = strings.TrimSpace(l)
				break
			}
		}
		switch {
		case line == "":
			return name + " mcp list does not show git-codex: " + lastLine(out), false, ""
		case strings.Contains(line, "Connected") && !strings.Contains(line, "Disconnected"):
			return name + " mcp list: " + line, true, ""
		case strings.Contains(line, "Disabled"):
			return name + " mcp list: " + line, false, fmt.Sprintf("; Gemini CLI starts stdio servers only in folders you trust: run `gemini` in %s once and trust it", root)
		}
		return name + " mcp list: " + line, false, "; run `git codex mcp` in " + root + " to see why it stops"
	case "codex":
		out, err := runCLI(ctx, prog, root, []string{"mcp", "list", "--json"})
		var servers []struct {
			Name      string `json:"name"`
			Enabled   bool   `json:"enabled"`
			Transport struct {
				Command string            `json:"command"`
				Args    []string          `json:"args"`
				Env     map[string]string `json:"env"`
			} `json:"transport"`
		}
		if i := strings.Index(out, "["); err != nil || i < 0 || json.Unmarshal([]byte(out[i:]), &servers) != nil {
			return "codex mcp list --json: " + lastLine(out), false, ""
		}
		for _, s := range servers {
			if s.Name != "git-codex" {
				continue
			}
			if !s.Enabled {
				return "codex mcp list: git-codex is disabled", false, "; enable it in ~/.codex/config.toml"
			}
			var env []string
			for k, v := range s.Transport.Env {
				env = append(env, k+"="+v)
			}
			if err := probeServer(ctx, root, s.Transport.Command, s.Transport.Args, env); err != nil {
				return "codex mcp list shows git-codex (" + s.Transport.Command + " " + strings.Join(s.Transport.Args, " ") + "), and started as Codex CLI starts it, it fails: " + err.Error(), false, ""
			}
			return "codex mcp list shows git-codex (" + s.Transport.Command + " " + strings.Join(s.Transport.Args, " ") + "), enabled; started as Codex CLI starts it, it answered initialize", true, ""
		}
		return "codex mcp list --json has no git-codex", false, ""
	}
	return "", false, ""
}

// probeServer starts a stdio MCP server in dir and sends it an initialize.
func probeServer(ctx context.Context, dir, command string, args, env []string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, command, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer cmd.Wait()
	defer in.Close()
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"git-codex-setup","version":"1"}}}`)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.Contains(line, `"result"`) {
		in.Close()
		cmd.Wait()
		return fmt.Errorf("%s", strings.TrimSpace(strings.TrimSpace(line)+" "+stderr.String()))
	}
	return nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if keys[j] < keys[i] {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	return keys
}

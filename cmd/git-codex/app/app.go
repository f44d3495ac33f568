// Package app is the git codex command line: urfave/cli commands over the
// tools registry, plus the MCP server. It is a package (not main) so tests
// and testscripts can run Main in-process.
package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/cli/go-gh/v2/pkg/term"
	"github.com/gitcodex/git-codex/github"
	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/urfave/cli/v2"
)

// version is set at build time with -ldflags "-X github.com/gitcodex/git-codex/cmd/git-codex/app.version=...".
var version = "dev"

// Exit codes, decided in one place (exitCode).
const (
	exitOK    = 0
	exitError = 1 // a tool or command failed; stderr names the error code
	exitUsage = 2 // bad flags, arguments or command names
)

// env is what every command needs: streams, the working directory, the
// environment, and the tool registry. Tests build one with buffers.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	dir            string
	getenv         func(string) string
	reg            *tools.Registry
	tty            bool // stdout is a terminal
	color          bool // colour the output (a terminal without NO_COLOR)
	errTTY         bool // stderr is a terminal: show progress
	width          int
	// unknownCommand is set when urfave/cli reported an unknown command
	// name (it then returns no error), so the exit status is still 2.
	unknownCommand bool
}

// Main runs git codex with args (args[0] is the program name) and returns
// the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "git codex: %v\n", err)
		return exitError
	}
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, dir: dir, getenv: os.Getenv, reg: builtinRegistry(), width: 80}
	if f, ok := stdout.(*os.File); ok && term.IsTerminal(f) {
		e.tty = true
		if w, _, err := term.FromEnv().Size(); err == nil && w > 0 {
			e.width = w
		}
	}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(f) {
		e.errTTY = true
	}
	e.color = colorEnabled(e.tty)
	app := e.appFor(args)
	if err := unknownSubcommand(app, args); err != nil {
		return e.exitCode(err)
	}
	return e.exitCode(app.Run(permuteArgs(app, helpArgs(app, args))))
}

// builtinRegistry is every tool, reaching GitHub through package github.
// The clients it opens share one cache of GitHub's answers and their
// ETags: the watcher opens a client per pass and polls the same listings
// every interval, and a 304 costs nothing against the rate limit.
func builtinRegistry() *tools.Registry {
	return builtin.Registry().WithEnv(tools.Env{GitHub: github.NewCache().Open})
}

// app is the whole command tree, every flag built: for help, completion and
// the man page.
func (e *env) app() *cli.App {
	app := e.buildApp(nil)
	e.wrapActions(app)
	return app
}

// appFor is the command tree for running args: of the tool commands (~70,
// inferred from their input types), only the group args names gets its
// subcommands and only the command run gets its flags, unless help or
// completion may need them all. Building them all cost every run ~2 ms
// (perf).
func (e *env) appFor(args []string) *cli.App {
	for _, a := range args[min(1, len(args)):] {
		if a == "help" || a == "h" || a == "-h" || a == "--help" || a == "--generate-bash-completion" || a == "completion" {
			return e.app()
		}
	}
	words := commandWords(args)
	lazy := &lazyTree{fills: map[*cli.Command]func(){}}
	if len(words) > 0 {
		lazy.group = words[0]
	}
	app := e.buildApp(lazy)
	cmds := app.Commands
	for _, w := range words {
		c := findCommand(cmds, w)
		if c == nil {
			break
		}
		if fill, ok := lazy.fills[c]; ok {
			fill()
		}
		cmds = c.Subcommands
	}
	e.wrapActions(app)
	return app
}

// commandWords are the words of args after the program name and the
// global flags: the command path and what follows it.
func commandWords(args []string) []string {
	rest := args[min(1, len(args)):]
	for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
		if (rest[0] == "--as" || rest[0] == "--token") && len(rest) > 1 {
			rest = rest[1:]
		}
		rest = rest[1:]
	}
	return rest
}

// buildApp builds the command tree, leaving out what lazy says (appFor).
// wrapActions finishes it.
func (e *env) buildApp(lazy *lazyTree) *cli.App {
	app := &cli.App{
		Name:     "git-codex",
		HelpName: "git codex",
		Usage:    "coordinate teams of AI coding agents, with all state kept in git",
		Version:  version,
		Description: "Every tool call is one commit on refs/codex/state: its tree is the whole state, its history the audit trail.\n" +
			"Agents reach the same tools through `git codex mcp`. Run `git codex help <command>` for details.",
		Reader:    e.stdin,
		Writer:    e.stdout,
		ErrWriter: e.stderr,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "as", EnvVars: []string{"CODEX_INSTANCE"}, Usage: "act as this agent `ID` (default: human:EMAIL, EMAIL from git config user.email)"},
			&cli.StringFlag{Name: "token", EnvVars: []string{"CODEX_TOKEN"}, Usage: "the agent's credential `TOKEN` (see auth.agents)"},
			&cli.BoolFlag{Name: "no-pager", Usage: "do not page long output (log, show, tools) on a terminal"},
		},
		Commands: append([]*cli.Command{
			e.initCommand(),
			e.demoCommand(),
			e.demoAgentCommand(),
			e.endSessionCommand(),
			e.statusCommand(),
			e.logCommand(),
			e.showCommand(),
			e.toolsCommand(),
			e.callCommand(),
			e.mcpCommand(),
			e.syncCommand("sync", "fetch, merge and push the state with a remote (default origin)", true),
			e.syncCommand("pull", "fetch and merge a remote's state, without pushing", false),
			e.pushCommand(),
			e.watchCommand(),
			e.remoteCommand(),
			e.attachCommand(),
			e.setupCommand(),
			e.doctorCommand(),
			e.uiCommand(),
			e.completionCommand(),
			e.versionCommand(),
		}, e.toolCommands(lazy)...),
		ExitErrHandler:       func(*cli.Context, error) {}, // Main decides exit codes
		OnUsageError:         onUsageError,
		EnableBashCompletion: true,
		HideHelpCommand:      false,
	}
	app.CommandNotFound = func(c *cli.Context, name string) {
		fmt.Fprintf(e.stderr, "git codex: unknown command %q%s; see `git codex help`\n", name, didYouMean(name, c.App.Commands))
		e.unknownCommand = true
	}
	setUsageError(app.Commands, app.OnUsageError)
	return app
}

// versionCommand answers `git codex version` as --version does (git has
// `git version`, and people type it).
func (e *env) versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print git codex's version (as --version)",
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError{err: fmt.Errorf("version takes no arguments")}
			}
			cli.VersionPrinter(c)
			return nil
		},
	}
}

// wrapActions wraps the actions of commands with --json to print errors as
// JSON, then those of long outputs in the pager; it runs once the flags it
// looks for are built.
func (e *env) wrapActions(app *cli.App) {
	e.setJSONErrors(app.Commands)
	for _, c := range app.Commands {
		if c.Name == "log" || c.Name == "show" || c.Name == "tools" {
			c.Action = e.paged(c.Action)
		}
	}
}

// setUsageError makes every command report flag mistakes (unknown flags,
// missing or unparseable values) as a usageError, exit status 2, like the
// app's own flags; urfave/cli would print the help and return a plain error.
func setUsageError(cmds []*cli.Command, fn cli.OnUsageErrorFunc) {
	for _, c := range cmds {
		c.OnUsageError = fn
		setUsageError(c.Subcommands, fn)
	}
}

// usageError marks a mistake in how the command was typed; help, when
// set, is the command whose -h says how to type it.
type usageError struct {
	err  error
	help string
}

func (u usageError) Error() string { return u.err.Error() }

// onUsageError reports a flag mistake as a usageError naming the command's
// help, and says so when the unknown flag is the name of one of its
// arguments (`delegate query --prompt hi` for `delegate query hi`).
func onUsageError(c *cli.Context, err error, _ bool) error {
	ue := usageError{err: err}
	if c == nil || c.Command == nil || c.Command.HelpName == "" {
		return ue
	}
	ue.help = c.Command.HelpName
	ue.err = flagValueError(c.Command, err)
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	name = strings.TrimPrefix(name, "-")
	if ok && name != "" && strings.Contains(" "+c.Command.ArgsUsage+" ", " <"+name+"> ") {
		ue.err = fmt.Errorf("<%s> is an argument, not a flag: %s [options] %s", name, c.Command.HelpName, c.Command.ArgsUsage)
	}
	return ue
}

// exitCode prints err for a person and maps it to an exit status.
func (e *env) exitCode(err error) int {
	if err == nil {
		if e.unknownCommand {
			return exitUsage
		}
		return exitOK
	}
	var te *tools.Error
	var ue usageError
	var silent silentError
	switch {
	case errors.As(err, &silent):
		return exitError
	case errors.As(err, &te):
		te = e.explain(context.Background(), te)
		fmt.Fprintf(e.stderr, "git codex: %s: %s\n", te.Code, te.Message)
		return exitError
	case errors.As(err, &ue):
		help := "git codex help"
		if ue.help != "" {
			help = ue.help + " -h"
		}
		fmt.Fprintf(e.stderr, "git codex: %v\nRun `%s` for usage.\n", ue.err, help)
		return exitUsage
	case strings.Contains(err.Error(), "flag provided but not defined"), strings.HasPrefix(err.Error(), "Required flag"):
		fmt.Fprintf(e.stderr, "git codex: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(e.stderr, "git codex: %v\n", err)
	return exitError
}

// silentError is a failure already reported on stdout (e.g. by `call`,
// which prints the error envelope); exitCode only sets the status.
type silentError struct{ code tools.Code }

func (s silentError) Error() string { return string(s.code) }

// asFlag returns the caller given with --as or CODEX_INSTANCE, checked, or
// "" when none was given.
func asFlag(c *cli.Context) (string, error) {
	id := c.String("as")
	if id == "" {
		return "", nil
	}
	if err := tools.ValidateCallerID(id); err != nil {
		return "", tools.AsError(err)
	}
	return id, nil
}

// open opens the store of the repository around the working directory.
func (e *env) open() (*gitstate.Store, error) {
	st, err := gitstate.Open(e.dir, gitstate.Options{})
	if err != nil {
		return nil, tools.StoreError(err)
	}
	return st, nil
}

// session works out the caller and opens the store: what every command
// that acts for someone needs. The caller closes the store.
// The caller is --as or CODEX_INSTANCE, else the person named by git's
// user.email.
func (e *env) session(c *cli.Context) (string, *gitstate.Store, error) {
	caller, err := asFlag(c)
	if err != nil {
		return "", nil, err
	}
	st, err := e.open()
	if err != nil {
		return "", nil, err
	}
	if caller == "" {
		email := e.userEmail(st.GitDir())
		if email == "" {
			st.Close()
			return "", nil, tools.Errorf(tools.InvalidInput, "who is calling? set `git config user.email`, or pass --as <agent-id> (or CODEX_INSTANCE)")
		}
		caller = tools.HumanID(email)
	}
	return caller, st, nil
}

// call runs one tool through the registry, exactly as MCP does.
func (e *env) call(ctx context.Context, c *cli.Context, name string, args []byte) tools.Result {
	o, st, err := e.origin(c)
	if err != nil {
		// refused before the registry: the envelope it would give
		te := *tools.AsError(err)
		te.ToolName = name
		return tools.Result{Error: &te, Timestamp: tools.Timestamp(time.Now())}
	}
	defer st.Close()
	// Ctrl-C stops a long call's work outside git (a delegated turn) and
	// lets it record how it ended; its messages print on stderr.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = tools.WithProgress(ctx, func(_ int, msg string) { fmt.Fprintln(e.stderr, progressLine(msg)) })
	res := e.reg.CallAs(ctx, st, o, name, args)
	if res.Notice != "" {
		fmt.Fprintf(e.stderr, "git codex: note: %s\n", res.Notice)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(e.stderr, "git codex: warning: %s\n", w)
	}
	return res
}

// progressLine is a call's progress message as a person reads it on
// stderr: a retry (a JSON object of type "retry", as MCP clients get it)
// becomes one plain line; anything else (a delegated turn's messages) is
// printed as it came.
func progressLine(msg string) string {
	var r struct {
		Type    string `json:"type"`
		Tool    string `json:"tool"`
		What    string `json:"what"`
		Attempt int    `json:"attempt"`
		Of      int    `json:"of"`
		WaitMS  int64  `json:"wait_ms"`
		Error   string `json:"error"`
	}
	if !strings.HasPrefix(msg, `{"`) || json.Unmarshal([]byte(msg), &r) != nil || r.Type != "retry" {
		return msg
	}
	return fmt.Sprintf("git codex: %s: %s failed (try %d of %d), trying again in %dms: %s", r.Tool, r.What, r.Attempt, r.Of, r.WaitMS, r.Error)
}

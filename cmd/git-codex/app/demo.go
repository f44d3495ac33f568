package app

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/gitcodex/git-codex/demo"
	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/ui"
	"github.com/urfave/cli/v2"
)

// demoOptions is what `git codex demo` runs with.
type demoOptions struct {
	Dir  string
	Keep bool
}

func (e *env) demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "run the whole review loop once with stand-in agents and a stand-in GitHub: no API key needed",
		Description: "In a fresh repository (a temporary one, or --dir), spawns a coding agent that commits and asks for a\n" +
			"review; the reviewer sends needs_work, the coder fixes its work, the reviewer approves, and the coder opens\n" +
			"a pull request on a local stand-in of GitHub. The agents are stand-ins (a fixed script, no model) started\n" +
			"like a real agent CLI, in tmux panes on a private server, calling the real tools. Each step is printed as\n" +
			"its commit lands on refs/codex/state. Without --keep nothing is left behind: no repository, worktree,\n" +
			"tmux server or process.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "make the repository in `DIR` (new or empty) instead of a temporary directory"},
			&cli.BoolFlag{Name: "keep", Usage: "keep the repository and its worktrees afterwards, to look around"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError{err: fmt.Errorf("demo takes no arguments")}
			}
			return e.runDemo(c.Context, demoOptions{Dir: c.String("dir"), Keep: c.Bool("keep")})
		},
	}
}

func (e *env) runDemo(ctx context.Context, opts demoOptions) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the git-codex executable: %w", err)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := demo.Run(ctx, demo.Options{Dir: opts.Dir, Keep: opts.Keep, Exe: exe, Registry: e.reg, Out: e.stdout, UI: demoPage})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\ngit codex demo: done; pull request #%d\n", res.PullRequest.Number)
	return nil
}

// demoPage serves the web page (git codex ui) over the demo's repository
// on loopback while the demo runs; its actions go through the demo's
// registry, so they reach the demo's own tmux server.
func demoPage(ctx context.Context, st *gitstate.Store, reg *tools.Registry, caller string) (string, func(), error) {
	srv, err := ui.New(ui.Options{Store: st, Registry: reg, Caller: caller})
	if err != nil {
		return "", nil, err
	}
	url, err := srv.Start(ctx)
	if err != nil {
		return "", nil, err
	}
	return url, func() { srv.Close() }, nil
}

// demoAgentCommand is the stand-in agent the demo's launcher starts in a
// pane (hidden: people start it through `git codex demo`).
func (e *env) demoAgentCommand() *cli.Command {
	return &cli.Command{
		Name:            "demo-agent",
		Hidden:          true,
		Usage:           "the demo's stand-in agent CLI (started by `git codex demo` in an instance's pane)",
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			code := demo.RunAgent(c.Context, demo.AgentIO{Args: c.Args().Slice(), Stdin: e.stdin, Stdout: e.stdout, Getenv: e.getenv, Exe: exe})
			if code != 0 {
				return silentError{"AGENT_FAILED"}
			}
			return nil
		},
	}
}

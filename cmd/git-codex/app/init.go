package app

import (
	"errors"
	"fmt"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/urfave/cli/v2"
)

func (e *env) initCommand() *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "start git codex in this repository (creates refs/codex/state)",
		Description: "Writes the first state commit: an empty config, so the default permission policy applies.\n" +
			"Running it again changes nothing.",
		Flags: []cli.Flag{&cli.StringSliceFlag{Name: "remote", Usage: "also configure `REMOTE` to carry the state (as `git codex remote add`)"}},
		Action: func(c *cli.Context) error {
			// open first: a repository git codex cannot write is refused
			// before anything, its config included, is changed
			caller, st, err := e.session(c)
			if err != nil {
				return err
			}
			defer st.Close()
			for _, r := range c.StringSlice("remote") {
				if err := e.configureRemote(c, r); err != nil {
					return err
				}
			}
			commit, err := tools.Init(c.Context, st, caller)
			if errors.Is(err, gitstate.ErrAlreadyInitialized) {
				fmt.Fprintf(e.stderr, "git codex is already initialised in %s\n", st.GitDir())
				return nil
			}
			if err != nil {
				return tools.StoreError(err)
			}
			fmt.Fprintf(e.stdout, "Initialised git codex in %s (%s at %s)\n", st.GitDir(), gitstate.RefState, commit.Hash[:12])
			return nil
		},
	}
}

package app

import (
	"errors"
	"time"

	"github.com/gitcodex/git-codex/tmux"
	"github.com/gitcodex/git-codex/tools/review"
	"github.com/urfave/cli/v2"
)

// endSessionCommand kills a tmux session and its panes' process trees
// after a moment (hidden: a reviewer's own git codex mcp starts it,
// detached, to end the reviewer's session once its answer is out; see
// review.EndSessionCommand).
func (e *env) endSessionCommand() *cli.Command {
	return &cli.Command{
		Name:      review.EndSessionCommand,
		Hidden:    true,
		Usage:     "kill a tmux session and every process of its panes after a moment (started by git codex itself)",
		ArgsUsage: "SESSION",
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "after", Usage: "wait this long first"},
			&cli.StringFlag{Name: "socket", Usage: "the tmux server's socket name or path (default: the calling environment's)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageError{err: errors.New("end-session takes one session name"), help: "git codex " + review.EndSessionCommand}
			}
			select {
			case <-time.After(c.Duration("after")):
			case <-c.Context.Done():
				return c.Context.Err()
			}
			err := tmux.Runner{Socket: c.String("socket")}.Kill(c.Context, c.Args().First())
			if errors.Is(err, tmux.ErrNoSession) {
				return nil
			}
			return err
		},
	}
}

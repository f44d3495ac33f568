package app

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
	"github.com/urfave/cli/v2"
)

// attachCommand hands the terminal to an instance's tmux session. It is
// not a tool: nothing changes, and the process becomes tmux.
func (e *env) attachCommand() *cli.Command {
	return &cli.Command{
		Name:      "attach",
		Usage:     "attach your terminal to an instance's tmux session (detach with the tmux prefix, then d)",
		ArgsUsage: "<id>",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageError{err: fmt.Errorf("attach takes one instance id")}
			}
			st, err := e.open()
			if err != nil {
				return err
			}
			defer st.Close()
			machine, err := st.MachineID()
			if err != nil {
				return tools.StoreError(err)
			}
			var argv []string
			err = st.View(c.Context, func(sn *gitstate.Snapshot) error {
				r, session, err := instance.AttachTarget(sn, e.reg.ConfigKeys(), c.Args().First(), machine)
				if err != nil {
					return err
				}
				argv = append(r.Args(), "attach-session", "-t", "="+session)
				return nil
			})
			if err != nil {
				return tools.StoreError(err)
			}
			bin, err := exec.LookPath("tmux")
			if err != nil {
				return tools.Errorf(tools.InternalError, "tmux is not on PATH")
			}
			return syscall.Exec(bin, append([]string{"tmux"}, argv...), os.Environ())
		},
	}
}

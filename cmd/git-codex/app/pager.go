package app

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/cli/go-gh/v2/pkg/term"
	"github.com/urfave/cli/v2"
)

// colorEnabled says whether output gets colour: on a terminal unless
// NO_COLOR (or CLICOLOR=0) is set, or anywhere with CLICOLOR_FORCE, as
// go-gh's term reads them.
func colorEnabled(tty bool) bool {
	return term.IsColorForced() || (tty && !term.IsColorDisabled())
}

// ANSI colours for the few things git codex colours, as git does: commits
// yellow, changes green, refusals red.
const (
	ansiYellow = "\x1b[33m"
	ansiGreen  = "\x1b[32m"
	ansiRed    = "\x1b[31m"
	ansiReset  = "\x1b[0m"
)

// paint wraps s in an ANSI colour when colour is on.
func (e *env) paint(color, s string) string {
	if !e.color || color == "" || s == "" {
		return s
	}
	return color + s + ansiReset
}

// paged runs a command whose output can be long (log, show, tools)
// through a pager when stdout is a terminal, as git does: $GIT_PAGER, else
// $PAGER, else less (with LESS=FRX, so short output does not wait for a
// key); "cat", --no-pager or no terminal mean none.
func (e *env) paged(action cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		stop := e.startPager(c)
		err := action(c)
		if stop() && errors.Is(err, syscall.EPIPE) {
			err = nil // the reader quit the pager early
		}
		return err
	}
}

// startPager points e.stdout at a pager and returns the function that
// waits for it (reporting whether a pager ran).
func (e *env) startPager(c *cli.Context) (stop func() bool) {
	none := func() bool { return false }
	if !e.tty || c.Bool("no-pager") {
		return none
	}
	pager := e.getenv("GIT_PAGER")
	if pager == "" {
		pager = e.getenv("PAGER")
	}
	if pager == "" {
		pager = "less"
	}
	if f := strings.Fields(pager); len(f) == 0 || f[0] == "cat" {
		return none
	} else if _, err := exec.LookPath(f[0]); err != nil {
		return none // no such pager: print as if piped to cat
	}
	cmd := exec.Command("sh", "-c", pager)
	cmd.Dir = e.dir
	cmd.Stdout, cmd.Stderr = e.stdout, e.stderr
	cmd.Env = os.Environ()
	if e.getenv("LESS") == "" {
		cmd.Env = append(cmd.Env, "LESS=FRX")
	}
	if e.getenv("LV") == "" {
		cmd.Env = append(cmd.Env, "LV=-c")
	}
	w, err := cmd.StdinPipe()
	if err != nil {
		return none
	}
	if err := cmd.Start(); err != nil {
		return none // no pager to be had: print as if piped to cat
	}
	out := e.stdout
	e.stdout = w
	return func() bool {
		w.Close()
		cmd.Wait()
		e.stdout = out
		return true
	}
}

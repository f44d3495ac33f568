package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/urfave/cli/v2"
)

// explain adds what the tools cannot know to an error for a person: a
// repository without state whose remote has some (a fresh clone) needs
// `git codex sync <remote>`, not `git codex init`.
func (e *env) explain(ctx context.Context, te *tools.Error) *tools.Error {
	if te == nil || te.Code != tools.NotInitialized {
		return te
	}
	st, err := gitstate.Open(e.dir, gitstate.Options{})
	if err != nil {
		return te
	}
	defer st.Close()
	if rs, err := st.RemoteStates(ctx); err == nil && len(rs) > 0 {
		return withMessage(te, fmt.Sprintf("this repository has no git codex state yet, but %s's was fetched; run `git codex sync %s` to pick it up", rs[0].Remote, rs[0].Remote))
	}
	remotes, err := st.Remotes(ctx)
	if err != nil || len(remotes) == 0 {
		return te
	}
	r := remotes[0]
	for _, name := range remotes {
		if name == "origin" {
			r = name
		}
	}
	return withMessage(te, fmt.Sprintf("this repository has no git codex state yet; if %s has it (a fresh clone), run `git codex sync %s`; to start one here, run `git codex init`", r, r))
}

func withMessage(te *tools.Error, msg string) *tools.Error {
	out := *te
	out.Message = msg
	return &out
}

// setJSONErrors makes every command with --json print a failure as the
// error envelope on stdout, {"ok":false,"error":{code,message,details}},
// as `git codex call` and MCP do, so a script reading stdout sees why
// (stderr still gets the line for a person, and the exit status is 1).
func (e *env) setJSONErrors(cmds []*cli.Command) {
	for _, c := range cmds {
		e.setJSONErrors(c.Subcommands)
		if c.Action == nil || !hasFlag(c, "json") {
			continue
		}
		action := c.Action
		c.Action = func(c *cli.Context) error {
			err := action(c)
			var te *tools.Error
			if err == nil || !c.Bool("json") || !errors.As(err, &te) {
				return err
			}
			te = e.explain(c.Context, te)
			var rf refused
			var warnings []string
			if errors.As(err, &rf) {
				warnings = rf.warnings
			}
			if werr := writeJSON(e.stdout, tools.Result{Error: te, Warnings: warnings, Timestamp: tools.Timestamp(time.Now())}); werr != nil {
				return werr
			}
			fmt.Fprintf(e.stderr, "git codex: %s: %s\n", te.Code, te.Message)
			return silentError{te.Code}
		}
	}
}

func hasFlag(c *cli.Command, name string) bool {
	for _, f := range c.Flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

// refused is a tool's refusal with the warnings its result carried (they
// are printed on stderr as the call returns), so that --json prints the
// envelope `git codex call` prints.
type refused struct {
	err      *tools.Error
	warnings []string
}

func (r refused) Error() string { return r.err.Error() }
func (r refused) Unwrap() error { return r.err }

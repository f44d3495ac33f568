package app

import (
	"errors"
	"fmt"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/urfave/cli/v2"
)

// shown is `git codex show --json`: the event and the records it changed.
type shown struct {
	logEntry
	Changes []gitstate.Change `json:"changes"`
}

func (e *env) showCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "show one event: its call, result, and the records it changed",
		ArgsUsage: "<commit | record-id>",
		Description: "Takes a commit of refs/codex/state (any revision git understands), or the id of a record\n" +
			"(mail m-..., task t-..., decision d-..., agent id, lock name, config key): then the latest event\n" +
			"that created or changed it (reads and refusals that name it are skipped; `git codex log` lists them).",
		Flags: []cli.Flag{jsonFlag()},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageError{err: fmt.Errorf("show takes one commit or record id")}
			}
			st, err := e.open()
			if err != nil {
				return err
			}
			defer st.Close()
			ev, err := findEvent(c, st, c.Args().First())
			if err != nil {
				return err
			}
			viewer, err := asFlag(c)
			if err != nil {
				return err
			}
			ev = forViewer(ev, viewer)
			changes, err := st.Changes(c.Context, ev.Commit)
			if errors.Is(err, gitstate.ErrHistoryCutOff) {
				// the history stops here: what it changed is not known
				changes, err = nil, nil
			}
			if err != nil {
				return tools.StoreError(err)
			}
			out := shown{logEntry: entryOf(ev), Changes: changes}
			if out.Changes == nil {
				out.Changes = []gitstate.Change{}
			}
			if c.Bool("json") {
				return writeJSON(e.stdout, out)
			}
			fmt.Fprintf(e.stdout, "%s\nkind   %s\n", e.paint(ansiYellow, "commit "+out.Commit), e.paint(kindColor(out.Kind), out.Kind))
			if ev.FoldedIn != "" {
				// its own commit is on no ref (git may have pruned it)
				fmt.Fprintf(e.stdout, "folded into %s (retention: its day's reads are one commit)\n", ev.FoldedIn)
			}
			fmt.Fprintf(e.stdout, "clock  %d\ntime   %s\n\n    %s\n\n", out.Clock, out.Time.Format("2006-01-02 15:04:05 -0700"), out.Summary)
			for _, t := range ev.Trailers {
				fmt.Fprintf(e.stdout, "    %s: %s\n", t.Key, t.Value)
			}
			if len(changes) > 0 {
				fmt.Fprintln(e.stdout)
			}
			for _, ch := range changes {
				fmt.Fprintf(e.stdout, "%-6s %s\n", ch.Action, ch.Path)
			}
			return nil
		},
	}
}

// findEvent resolves a revision, or else the newest change whose
// Codex-Target is the given record id: reads and refusals name their
// target too, but changed nothing.
func findEvent(c *cli.Context, st *gitstate.Store, arg string) (gitstate.Event, error) {
	ev, err := st.Event(c.Context, arg)
	if err == nil {
		return ev, nil
	}
	if !errors.Is(err, gitstate.ErrNotFound) {
		return gitstate.Event{}, tools.StoreError(err)
	}
	var found *gitstate.Event
	cutOff := false
	err = st.Events(c.Context, "", func(ev gitstate.Event) bool {
		cutOff = cutOff || ev.CutOff
		// (at a shallow boundary what a call changed is not known: its
		// event counts as the change it most likely was, unless refused)
		if ev.Get(gitstate.TrailerTarget) == arg && (ev.Kind() == kindChange || ev.CutOff && ev.Kind() != kindRefusal) {
			found = &ev
			return false
		}
		return true
	})
	if err != nil {
		return gitstate.Event{}, tools.StoreError(err)
	}
	if found == nil && cutOff {
		return gitstate.Event{}, tools.Errorf(tools.ResourceNotFound, "%q is neither a commit nor the id of a record created in the history this repository has: a shallow fetch cut it short (%s)", arg, gitstate.FetchMoreHint)
	}
	if found == nil {
		return gitstate.Event{}, tools.Errorf(tools.ResourceNotFound, "%q is neither a commit nor the id of a record; list events with `git codex log`", arg)
	}
	return *found, nil
}

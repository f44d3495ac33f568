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
			"Running it again changes nothing. If refs/codex/state was deleted but its state is still in the\n" +
			"object store, init says so and names it: --restore <commit> brings it back, --fresh starts afresh.\n" +
			"--restore also recovers from a tip whose objects are gone (STATE_UNREADABLE names the commit), and\n" +
			"repairs the reads refs that name objects that are gone (the reads of that tip): it prints each ref\n" +
			"it repaired or dropped and how many reads lost the state they read or their record (docs/STATE.md).",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "remote", Usage: "also configure `REMOTE` to carry the state (as `git codex remote add`)"},
			&cli.StringFlag{Name: "restore", Usage: "make the state of `COMMIT` current again (after refs/codex/state was deleted, or its tip lost objects)"},
			&cli.BoolFlag{Name: "fresh", Usage: "start an empty state even though an earlier one is still in the object store"},
		},
		Action: func(c *cli.Context) error {
			// open first: a repository git codex cannot write is refused
			// before anything, its config included, is changed
			o, st, err := e.origin(c)
			if err != nil {
				return err
			}
			defer st.Close()
			for _, r := range c.StringSlice("remote") {
				if err := e.configureRemote(c, r); err != nil {
					return err
				}
			}
			if rev := c.String("restore"); rev != "" {
				return e.restore(c, st, o, rev)
			}
			if !c.Bool("fresh") {
				lost, ok, err := st.FindLostState(c.Context)
				if err != nil {
					return tools.StoreError(err)
				}
				if ok {
					return tools.Errorf(tools.PreviousState, "%s is gone, but the state it named is still in the object store: %s (clock %d, %s: %q); restore it with `git codex init --restore %s`, or start an empty state with `git codex init --fresh`",
						gitstate.RefState, lost.Commit[:12], lost.Clock, lost.Time.UTC().Format("2006-01-02 15:04:05Z"), lost.Summary, lost.Commit).
						With("commit", lost.Commit).With("clock", uint64(lost.Clock))
				}
			}
			commit, err := e.reg.Init(c.Context, st, o)
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

// restore runs `init --restore <commit>`, then repairs the reads refs:
// the reads of a state whose objects are gone name them too (their trees
// are the state's), and `git fsck` reports them until they are rewritten.
// A state that reads whole is not restored over, but reads refs that do
// not read whole are still repaired (a restore made before they were, or
// one whose repair failed half-way, is finished by running it again).
func (e *env) restore(c *cli.Context, st *gitstate.Store, o tools.Origin, rev string) error {
	commit, err := e.reg.Restore(c.Context, st, o, rev)
	switch {
	case errors.Is(err, gitstate.ErrAlreadyInitialized):
		reps, rerr := st.RepairReads(c.Context)
		if len(reps) == 0 && rerr == nil {
			return tools.Errorf(tools.AlreadyExists, "%v; see `git codex log`", err)
		}
		fmt.Fprintf(e.stdout, "%s reads whole: nothing to restore\n", gitstate.RefState)
		return e.reportReadsRepairs(reps, rerr, rev)
	case errors.Is(err, gitstate.ErrNotFound):
		return tools.Errorf(tools.ResourceNotFound, "%v; name a commit of the state (see the STATE_UNREADABLE or PREVIOUS_STATE_FOUND message)", err)
	case err != nil:
		return tools.StoreError(err)
	}
	fmt.Fprintf(e.stdout, "Restored the state of %s in %s (%s at %s)\n", rev, st.GitDir(), gitstate.RefState, commit.Hash[:12])
	reps, rerr := st.RepairReads(c.Context)
	return e.reportReadsRepairs(reps, rerr, rev)
}

// reportReadsRepairs says what the restore did to each reads ref it
// changed, and how many reads' records are gone.
func (e *env) reportReadsRepairs(reps []gitstate.ReadsRepair, err error, rev string) error {
	for _, r := range reps {
		if r.Dropped() {
			fmt.Fprintf(e.stdout, "Dropped %s (was %s): its commit is gone, and with it every read it held (how many is not known)\n", r.Ref, r.Old[:12])
			continue
		}
		msg := fmt.Sprintf("Repaired %s (was %s, now %s): %d %s kept", r.Ref, r.Old[:12], r.New[:12], r.Reads, plural(r.Reads, "read"))
		if r.NoState > 0 {
			msg += fmt.Sprintf(", %d of them without the state they read (its objects are gone: %s)", r.NoState, gitstate.TrailerTreeLost)
		}
		if r.Lost > 0 {
			msg += fmt.Sprintf("; %d %s lost with the fold's %s", r.Lost, plural(r.Lost, "read"), gitstate.FoldedReadsFile)
		}
		if r.CutAt != "" {
			msg += fmt.Sprintf("; the reads before commit %s are gone with it (how many is not known: %s)", r.CutAt[:12], gitstate.TrailerReadsLost)
		}
		fmt.Fprintln(e.stdout, msg)
	}
	if err != nil {
		return tools.StoreError(fmt.Errorf("repairing the reads refs: %w; run `git codex init --restore %s` again to finish", err, rev))
	}
	return nil
}

package app

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/urfave/cli/v2"
)

// syncReport is `git codex sync --json`.
type syncReport struct {
	Remote   string `json:"remote"`
	Found    bool   `json:"found"`    // the remote had git codex state
	Merge    string `json:"merge"`    // up-to-date, fast-forward or merged; "" if nothing was fetched
	Resolved int    `json:"resolved"` // records both sides had changed
	// Conflicts are the locks, tasks and reviews both sides had granted
	// to different holders: the earlier claim kept them, the loser was mailed.
	Conflicts []tools.Conflict `json:"conflicts"`
	// Dropped are records one side had where the other has a directory of
	// records: the directory wins (both versions stay in the histories).
	Dropped []string `json:"dropped"`
	// ArchiveRefused are records the remote's side deleted that record
	// archives hold, where no archive passed the checks that let such a
	// deletion stand (docs/STATE.md "Retention"): they stayed, and the
	// merge commit names each in a Codex-Archive-Refused trailer.
	ArchiveRefused []archiveRefused `json:"archive_refused"`
	// Published says the remote has our state afterwards; Pushed that a
	// push sent it (false when the remote already had it all).
	Published bool   `json:"published"`
	Pushed    bool   `json:"pushed"`
	Commit    string `json:"commit"` // the local tip afterwards
	Attempts  int    `json:"attempts"`
	// Ignored are values of this machine's settings (launchers,
	// github.api_url, paths) that the sync brought into the state: they
	// are never used (docs/SECURITY.md).
	Ignored []tools.IgnoredSetting `json:"ignored"`
	// Retries are the tries that failed because the remote did not
	// answer, and were tried again (retry.*).
	Retries []tools.RetryNote `json:"retries,omitempty"`
	// HistoryCutOff is set when this repository has the state's history
	// from that time on only (a shallow first sync): `sync --full`
	// fetches the rest.
	HistoryCutOff *time.Time `json:"history_cut_off,omitempty"`
}

// archiveRefused is a record a sync kept though an archive held it, and
// why the archive did not count.
type archiveRefused struct {
	Path    string `json:"path"`
	Archive string `json:"archive"`
	Reason  string `json:"reason"`
}

func remoteArg(c *cli.Context) (string, error) {
	if c.NArg() > 1 {
		return "", usageError{err: fmt.Errorf("%s takes at most one remote", c.Command.Name)}
	}
	if r := c.Args().First(); r != "" {
		return r, nil
	}
	return "origin", nil
}

func (e *env) syncCommand(name, usage string, push bool) *cli.Command {
	return &cli.Command{
		Name:      name,
		Usage:     usage,
		ArgsUsage: "[<remote>]",
		Description: "Fetches the remote's refs/codex/state and refs/notes/codex* (even if the remote's refspecs do not\n" +
			"carry them), merges them into the local state under the writer lock (a merge commit keeps both\n" +
			"audit trails; records changed on both sides merge field by field, newer clock first; a lock, task or\n" +
			"review granted on both sides stays with the earlier claim and the loser is mailed), merges notes by\n" +
			"union of lines" +
			map[bool]string{true: ",\nand pushes; if the remote moved meanwhile it fetches and merges again.", false: ".\nNothing is pushed."}[push],
		Flags: syncFlags(push),
		Action: func(c *cli.Context) error {
			remote, err := remoteArg(c)
			if err != nil {
				return err
			}
			o, st, err := e.origin(c)
			if err != nil {
				return err
			}
			defer st.Close()
			if err := knownRemote(c, st, remote); err != nil {
				return err
			}
			progress := e.progress(c)
			if progress != nil {
				fmt.Fprintf(progress, "syncing with %s...\n", remote)
			}
			deepen, err := deepenArg(c)
			if err != nil {
				return err
			}
			if c.Bool("full") {
				// a first sync fetches it whole at once; a shallow
				// repository is deepened after the sync (Unshallow)
				st.WholeHistory()
			}
			if deepen > 0 {
				// a first sync fetches that window at once; a cut-off
				// history is deepened before the sync (below)
				st.FirstSyncDays(deepen)
			}
			wasCutAt, wasCut, err := st.HistoryCutOff(c.Context)
			if err != nil {
				return tools.StoreError(err)
			}
			deepened := false
			if deepen > 0 && wasCut {
				// before the sync, as --full: its fetch then brings the
				// record archives of the longer window
				// (gitstate.skipArchivesBeforeCutOff)
				if _, deepened, err = st.Deepen(c.Context, remote, deepen, progress); err != nil {
					return tools.Errorf(tools.RemoteError, "could not fetch more of the state's history: %v", err)
				}
			}
			if c.Bool("full") && wasCut {
				// the history first: the sync then fetches (and adopts)
				// the record archives a cut-off history left on the
				// remote (gitstate.skipArchivesBeforeCutOff), in its one
				// fetch
				if _, err := st.Unshallow(c.Context, remote, progress); err != nil {
					return tools.Errorf(tools.RemoteError, "could not fetch the state's whole history: %v", err)
				}
			}
			res, err := e.reg.Sync(c.Context, st, o, remote, push, progress)
			if progress == nil { // (progress told them as they came)
				for _, n := range res.Retries {
					fmt.Fprintf(e.stderr, "git codex: note: %s did not answer (try %d of %d): %s; tried again after %dms\n", remote, n.Attempt, n.Of, n.Error, n.WaitMS)
				}
			}
			if err != nil {
				return err
			}
			if c.Bool("full") {
				if _, err := st.Unshallow(c.Context, remote, progress); err != nil {
					return tools.Errorf(tools.RemoteError, "the state was synced, but not its whole history: %v", err)
				}
			}
			cutAt, cut, err := st.HistoryCutOff(c.Context)
			if err != nil {
				return tools.StoreError(err)
			}
			if push && c.Bool("reads") {
				if err := syncReads(c, st, remote, progress); err != nil {
					return err
				}
			}
			r := syncReport{Remote: remote, Found: res.Found, Merge: string(res.Merge.Status), Resolved: len(res.Merge.Report.Resolved),
				Conflicts: res.Conflicts, Dropped: res.Merge.Report.Dropped, Published: res.Pushed, Pushed: res.Sent, Commit: res.Merge.Commit, Attempts: res.Attempts}
			if r.Conflicts == nil {
				r.Conflicts = []tools.Conflict{}
			}
			if r.Dropped == nil {
				r.Dropped = []string{}
			}
			r.ArchiveRefused = []archiveRefused{}
			for _, a := range res.Merge.Report.ArchiveRefused {
				r.ArchiveRefused = append(r.ArchiveRefused, archiveRefused{Path: a.Path, Archive: a.Archive, Reason: a.Reason})
			}
			r.Ignored = res.Ignored
			r.Retries = res.Retries
			if cut {
				at := cutAt.UTC()
				r.HistoryCutOff = &at
			}
			if r.Ignored == nil {
				r.Ignored = []tools.IgnoredSetting{}
			}
			if r.Commit == "" {
				// nothing was merged (the remote had no state): the tip is ours
				st.View(c.Context, func(sn *gitstate.Snapshot) error { r.Commit = sn.Commit(); return nil })
			}
			if c.Bool("json") {
				return writeJSON(e.stdout, r)
			}
			fmt.Fprintln(e.stdout, syncMessage(r, push))
			if msg := cutOffMessage(cutAt, cut, wasCutAt, wasCut, deepen, deepened); msg != "" {
				fmt.Fprintln(e.stdout, msg)
			}
			for _, a := range r.ArchiveRefused {
				fmt.Fprintf(e.stdout, "kept: %s: an archive holds it, but %s (%s)\n", a.Path, a.Reason, a.Archive)
			}
			for _, s := range r.Ignored {
				fmt.Fprintf(e.stdout, "ignored: %s\n", ignoredNote(s))
			}
			return nil
		},
	}
}

func (e *env) pushCommand() *cli.Command {
	return &cli.Command{
		Name:      "push",
		Usage:     "publish the local state, notes and archived cycles to a remote (fast-forward only)",
		ArgsUsage: "[<remote>]",
		Action: func(c *cli.Context) error {
			remote, err := remoteArg(c)
			if err != nil {
				return err
			}
			st, err := e.open()
			if err != nil {
				return err
			}
			defer st.Close()
			if ok, err := st.Initialized(c.Context); err != nil || !ok {
				return tools.StoreError(errors.Join(err, gitstate.ErrNotInitialized))
			}
			if err := knownRemote(c, st, remote); err != nil {
				return err
			}
			if err := st.Push(c.Context, remote, e.progress(c)); err != nil {
				if errors.Is(err, gitstate.ErrPushRejected) {
					return tools.Errorf(tools.PushRejected, "%s has state this repository lacks; run `git codex sync %s` to merge and push", remote, remote)
				}
				return tools.Errorf(tools.RemoteError, "%v", err)
			}
			fmt.Fprintf(e.stdout, "pushed %s to %s\n", gitstate.RefState, remote)
			return nil
		},
	}
}

func (e *env) remoteCommand() *cli.Command {
	return &cli.Command{
		Name:  "remote",
		Usage: "configure git remotes to carry git codex state",
		Subcommands: []*cli.Command{{
			Name:      "add",
			Usage:     "make plain `git fetch`/`git push` of a remote carry refs/codex/* and notes",
			ArgsUsage: "<remote>",
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return usageError{err: fmt.Errorf("remote add takes one remote name")}
				}
				return e.configureRemote(c, c.Args().First())
			},
		}},
	}
}

func (e *env) configureRemote(c *cli.Context, remote string) error {
	st, err := e.open()
	if err != nil {
		return err
	}
	defer st.Close()
	if err := knownRemote(c, st, remote); err != nil {
		return err
	}
	if err := st.ConfigureRemote(c.Context, remote); err != nil {
		return tools.Errorf(tools.RemoteError, "%v", err)
	}
	fmt.Fprintf(e.stdout, "remote %s now fetches into %s and pushes %s\n", remote, gitstate.RemoteStateRef(remote), gitstate.RefState)
	return nil
}

// progress is where git's transfer progress goes: stderr on a terminal,
// unless --quiet or --json; nowhere otherwise.
func (e *env) progress(c *cli.Context) io.Writer {
	if e.errTTY && !c.Bool("quiet") && !c.Bool("json") {
		return e.stderr
	}
	return nil
}

// syncMessage says in one line what a sync or pull did: what came in, and
// whether anything went out ("pushed" only when a push sent something).
func syncMessage(r syncReport, push bool) string {
	var b strings.Builder
	switch gitstate.MergeStatus(r.Merge) {
	case "":
		fmt.Fprintf(&b, "%s has no git codex state yet", r.Remote)
	case gitstate.MergeMerged:
		fmt.Fprintf(&b, "merged the state of %s (%d record(s) changed on both sides)", r.Remote, r.Resolved)
		if n := len(r.Conflicts); n > 0 {
			fmt.Fprintf(&b, "; %d conflict(s) settled, losers mailed: see `git codex conflict list`", n)
		}
		if n := len(r.Dropped); n > 0 {
			fmt.Fprintf(&b, "; %d record(s) dropped where %s has a directory: %s", n, r.Remote, strings.Join(r.Dropped, ", "))
		}
		if n := len(r.ArchiveRefused); n > 0 {
			fmt.Fprintf(&b, "; %d record(s) deleted there kept: no archive accounts for the deletion", countPaths(r.ArchiveRefused))
		}
	case gitstate.MergeFastForward:
		fmt.Fprintf(&b, "fast-forwarded to the state of %s", r.Remote)
	default:
		fmt.Fprintf(&b, "state up to date with %s", r.Remote)
	}
	switch {
	case !push:
	case r.Pushed:
		fmt.Fprintf(&b, "; pushed")
	default:
		fmt.Fprintf(&b, "; nothing to push")
	}
	return b.String()
}

// knownRemote refuses a remote name git does not know, before any fetch,
// with the commands that add one. URLs and paths are left to git.
func knownRemote(c *cli.Context, st *gitstate.Store, remote string) error {
	if strings.ContainsAny(remote, "/:\\") || remote == "." {
		return nil
	}
	remotes, err := st.Remotes(c.Context)
	if err != nil {
		return tools.StoreError(err)
	}
	for _, r := range remotes {
		if r == remote {
			return nil
		}
	}
	known := "this repository has no remotes"
	if len(remotes) > 0 {
		known = "its remotes: " + strings.Join(remotes, ", ")
	}
	return tools.Errorf(tools.RemoteError, "no remote named %q (%s); add one with `git remote add %s <url>`, then `git codex remote add %s` so plain fetch and push carry the state",
		remote, known, remote, remote).With("remote", remote)
}

// syncFlags are sync's and pull's flags; --reads publishes, so only sync
// has it.
func syncFlags(push bool) []cli.Flag {
	flags := []cli.Flag{&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress on stderr (shown only on a terminal)"},
		&cli.BoolFlag{Name: "full", Usage: "also fetch the state's whole history: a first sync fetches its last codex.firstSyncDays days (git config; 1 by default, 0: all), and `git codex log` says where it stops"},
		&cli.Float64Flag{Name: "deepen", DefaultText: "none", Usage: "also fetch the state's history back to `DAYS` days before its newest commit (a decimal number): on a first sync instead of codex.firstSyncDays, afterwards moving back where the history here stops (never forward)"}}
	if push {
		flags = append(flags, &cli.BoolFlag{Name: "reads", Usage: "also push this machine's reads and refusals (refs/codex/reads/<machine>/*) and fetch every machine's, for an audit (`git codex log --reads`); a plain sync moves none"})
	}
	return append(flags, jsonFlag())
}

// syncReads moves the reads refs that a plain sync leaves alone: this
// machine's to remote (with push) and every machine's from it.
func syncReads(c *cli.Context, st *gitstate.Store, remote string, progress io.Writer) error {
	if err := st.SyncReads(c.Context, remote, progress); err != nil {
		return tools.Errorf(tools.RemoteError, "the state was synced, but not the reads: %v", err)
	}
	return nil
}

// countPaths counts the records among refusals (an archive each: one
// record may have several).
func countPaths(refused []archiveRefused) int {
	paths := map[string]bool{}
	for _, a := range refused {
		paths[a.Path] = true
	}
	return len(paths)
}

// deepenArg is --deepen's days, 0 when not given: a number of days above
// 0, and not beside --full, which fetches them all.
func deepenArg(c *cli.Context) (float64, error) {
	if !c.IsSet("deepen") {
		return 0, nil
	}
	days := c.Float64("deepen")
	if !(days > 0) || days >= 1e6 {
		return 0, usageError{err: fmt.Errorf("--deepen takes a number of days above 0, not %s (`--full` fetches the whole history)", strconvDays(days)), help: c.Command.HelpName}
	}
	if c.Bool("full") {
		return 0, usageError{err: errors.New("--deepen and --full do not go together: --full fetches the whole history"), help: c.Command.HelpName}
	}
	return days, nil
}

// cutOffMessage is the line a sync prints about where the state's history
// here starts, when that is news: a first sync that fetched a window of
// it, or a --deepen (which says where the history starts now, or that it
// already went back that far).
func cutOffMessage(cutAt time.Time, cut bool, wasCutAt time.Time, wasCut bool, deepen float64, deepened bool) string {
	const when = "2006-01-02 15:04 MST"
	switch {
	case cut && !wasCut:
		setting := "codex.firstSyncDays"
		if deepen > 0 {
			setting = "--deepen"
		}
		return fmt.Sprintf("fetched the state's history since %s only (%s); %s", cutAt.UTC().Format(when), setting, gitstate.FetchMoreHint)
	case deepen <= 0 || !wasCut:
	case !cut:
		return "fetched the state's history back to its first commit: it is whole here now"
	case deepened:
		return fmt.Sprintf("fetched the state's history since %s (it started at %s here); `git codex sync --full` fetches the rest", cutAt.UTC().Format(when), wasCutAt.UTC().Format(when))
	default:
		return fmt.Sprintf("the state's history here starts at %s, and --deepen %s fetched nothing older: it already reaches back that far, or the remote has no older commit within %s days of its newest", cutAt.UTC().Format(when), strconvDays(deepen), strconvDays(deepen))
	}
	return ""
}

// strconvDays spells a number of days as typed: 3, 1.5.
func strconvDays(d float64) string { return strconv.FormatFloat(d, 'f', -1, 64) }

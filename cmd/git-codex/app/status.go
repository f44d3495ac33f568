package app

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/work"
	"github.com/urfave/cli/v2"
)

// statusReport is `git codex status --json`.
type statusReport struct {
	Ref    string         `json:"ref"`
	Commit string         `json:"commit"`
	Clock  gitstate.Clock `json:"clock"`
	// LastEvent is the state tip's call: a change (or, where git config
	// codex.reads=state, a read or refusal too).
	LastEvent   string    `json:"last_event"`
	LastEventAt time.Time `json:"last_event_at"`
	// LastChange is the newest call that changed the state: what a person
	// asking "what happened last?" wants, reads and refusals skipped.
	LastChange       string    `json:"last_change"`
	LastChangeCommit string    `json:"last_change_commit"`
	LastChangeAt     time.Time `json:"last_change_at"`
	work.StatusSummary
	// Unauthenticated counts, among the newest authWindow calls, those as
	// an agent that did not present its valid credential (Codex-Auth none
	// or invalid): believed under auth.agents=warn, and said here so that
	// someone sees it.
	Unauthenticated       int    `json:"unauthenticated_calls"`
	UnauthenticatedWindow int    `json:"unauthenticated_window"`
	Caller                string `json:"caller"`
	// Remotes are the remote states last fetched, and how many of their
	// commits the local state lacks.
	Remotes []gitstate.RemoteState `json:"remotes"`
	// Ignored are values of this machine's settings that the shared
	// state holds and git codex never uses (docs/SECURITY.md).
	Ignored []tools.IgnoredSetting `json:"ignored,omitempty"`
}

// statusOptions is what `git codex status` runs with.
type statusOptions struct {
	JSON bool
}

func (e *env) statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show the state's tip, the last change, agents, tasks being worked on, locks held, and your unread mail",
		Description: "Reads only (no audit commit). Also says when a fetched remote state (refs/codex/remotes/<remote>/state)\n" +
			"has commits the local state lacks: `git codex sync <remote>` merges them.",
		Flags: []cli.Flag{jsonFlag()},
		Action: func(c *cli.Context) error {
			return e.runStatus(c, statusOptions{JSON: c.Bool("json")})
		},
	}
}

// listedInStatus bounds the tasks and locks status lists one per line.
const listedInStatus = 5

func (e *env) runStatus(c *cli.Context, opts statusOptions) error {
	caller, st, err := e.session(c)
	if err != nil {
		return err
	}
	defer st.Close()
	r := statusReport{Ref: gitstate.RefState, Caller: caller}
	err = st.View(c.Context, func(sn *gitstate.Snapshot) error {
		r.Commit, r.Clock = sn.Commit(), sn.Clock()
		var err error
		if r.StatusSummary, err = work.Summary(sn, caller, opts.JSON); err != nil {
			return err
		}
		r.Ignored, err = e.reg.IgnoredSettings(sn)
		return err
	})
	if err != nil {
		return tools.StoreError(err)
	}
	if err := lastEvents(c.Context, st, &r); err != nil {
		return tools.StoreError(err)
	}
	if r.Remotes, err = st.RemoteStates(c.Context); err != nil {
		return tools.StoreError(err)
	}
	if r.Remotes == nil {
		r.Remotes = []gitstate.RemoteState{}
	}
	if opts.JSON {
		return writeJSON(e.stdout, r)
	}
	e.printStatus(e.stdout, r)
	return nil
}

// authWindow is how many of the newest calls status looks at for calls
// that did not prove who made them.
const authWindow = 1000

// lastEvents fills in the tip's event, the newest change, and the
// unauthenticated calls among the newest authWindow: those of the
// state's history and of this machine's reads refs, where reads and
// refusals are recorded (an agent that only polls is counted too). The
// walks read their commits through the ones the last status kept
// (gitstate.KeepCommits): most of the window is the same commits from one
// status to the next, and reading them from the packs was half of a
// status on a week-old state (issue 27).
func lastEvents(ctx context.Context, st *gitstate.Store, r *statusReport) error {
	kept := st.KeepCommits("status")
	defer kept.Save()
	err := kept.EventsOf(ctx, []string{r.Commit}, func(ev gitstate.Event) bool {
		if ev.Commit == r.Commit {
			r.LastEvent, r.LastEventAt = ev.Summary, ev.Time
		}
		if ev.Kind() == kindChange {
			r.LastChange, r.LastChangeCommit, r.LastChangeAt = ev.Summary, ev.Commit, ev.Time
			return false
		}
		return true
	})
	if err != nil {
		return err
	}
	reads, err := st.ReadsRefs()
	if err != nil {
		return err
	}
	n := 0
	return kept.EventsOf(ctx, append([]string{r.Commit}, reads...), func(ev gitstate.Event) bool {
		n++
		r.UnauthenticatedWindow = n
		if a := ev.Get(gitstate.TrailerAuth); a == "none" || a == "invalid" {
			r.Unauthenticated++
		}
		return n < authWindow
	})
}

func (e *env) printStatus(w io.Writer, r statusReport) {
	fmt.Fprintf(w, "state:  %s at %s (clock %d)\n", r.Ref, r.Commit[:12], r.Clock)
	fmt.Fprintf(w, "last:   %s (%s)\n", r.LastChange, e.when(r.LastChangeAt))
	fmt.Fprintf(w, "agents: %s\n", counts(r.Agents, func(t string) string { return t }))
	fmt.Fprintf(w, "tasks:  %s\n", counts(r.Tasks, func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", " ")) }))
	for i, t := range r.Active {
		if i == listedInStatus {
			fmt.Fprintf(w, "        ... %d more: `git codex task list --state IN_PROGRESS`\n", len(r.Active)-i)
			break
		}
		holder := "-"
		if t.Claim != nil {
			holder = t.Claim.Holder
		}
		fmt.Fprintf(w, "        %s %-11s %s: %s\n", t.ID, t.State, holder, oneLine(t.Title))
	}
	fmt.Fprintf(w, "locks:  %d held\n", len(r.Locks))
	for i, l := range r.Locks {
		if i == listedInStatus {
			fmt.Fprintf(w, "        ... %d more: `git codex lock list`\n", len(r.Locks)-i)
			break
		}
		fmt.Fprintf(w, "        %s by %s since %s", l.Name, l.Claim.Holder, e.when(l.Claim.At))
		if l.ExpiresAt != nil && !l.ExpiresAt.After(time.Now()) {
			fmt.Fprint(w, " (expired)")
		}
		fmt.Fprintln(w)
	}
	if r.Unauthenticated > 0 {
		fmt.Fprintf(w, "auth:   %s\n", e.paint(ansiRed, fmt.Sprintf("%d of the last %d calls were made as an agent that did not present its valid credential; see `git codex log --unauthenticated`",
			r.Unauthenticated, r.UnauthenticatedWindow)))
	}
	fmt.Fprintf(w, "you:    %s, %d unread mail\n", r.Caller, r.Unread)
	for _, rs := range r.Remotes {
		if rs.Behind > 0 {
			fmt.Fprintf(w, "behind: %s has %d commit(s) this state lacks; run `git codex sync %s`\n", rs.Remote, rs.Behind, rs.Remote)
		}
	}
	for _, s := range r.Ignored {
		fmt.Fprintf(w, "ignored: %s\n", ignoredNote(s))
	}
}

// counts formats a count per kind: "3 (supervisor 1, worker 2)", or "0".
func counts(m map[string]int, label func(string) string) string {
	var parts []string
	total := 0
	for k, n := range m {
		parts = append(parts, fmt.Sprintf("%s %d", label(k), n))
		total += n
	}
	sort.Strings(parts)
	if total == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, ", "))
}

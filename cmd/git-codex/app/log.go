package app

import (
	"errors"
	"fmt"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/urfave/cli/v2"
)

// logEntry is one audit event as `git codex log --json` prints it: the
// store's one projection of an event (the web page answers the same).
type logEntry = gitstate.AuditEntry

// authMark is what the log's ACTOR column adds for a call as an agent
// that did not prove who it is.
func authMark(en logEntry) string {
	switch en.Auth {
	case "none":
		return " (no token)"
	case "invalid":
		return " (bad token)"
	}
	return ""
}

// Event kinds, as logEntry.Kind names them.
const (
	kindChange  = gitstate.KindChange
	kindRead    = gitstate.KindRead
	kindRefusal = gitstate.KindRefusal
)

// kindColor is the colour of an event's kind in the log.
func kindColor(kind string) string {
	switch kind {
	case kindChange:
		return ansiGreen
	case kindRefusal:
		return ansiRed
	}
	return ""
}

func entryOf(ev gitstate.Event) logEntry { return ev.Entry() }

func (e *env) logCommand() *cli.Command {
	return &cli.Command{
		Name:      "log",
		Usage:     "show the audit trail: every tool call, newest first",
		ArgsUsage: "[<revision>]",
		Description: "Reads the history of refs/codex/state (or the given revision); each commit is one call.\n" +
			"KIND says what the call did: change (the state changed), read (it succeeded and changed nothing:\n" +
			"the commit's tree is its parent's) or, for a refusal, the error code (Codex-Error).\n" +
			"ACTOR is marked (no token) or (bad token) for a call as an agent that did not prove who it is\n" +
			"(believed under auth.agents=warn); SUMMARY ends with what git codex redacted from what the call wrote.\n" +
			"The same trail is in plain `git log refs/codex/state`.\n" +
			"Reads and refusals change nothing, so this machine records them on its own reads refs\n" +
			"(refs/codex/reads/<machine>/<day>, which sync does not push unless asked: docs/STATE.md); --reads\n" +
			"shows them among the changes, and --errors, --error and --unauthenticated look there too.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tool", Usage: "only calls of this tool"},
			&cli.StringFlag{Name: "actor", Usage: "only calls by this caller id"},
			&cli.StringFlag{Name: "target", Usage: "only calls that created or changed this record `ID` (a mail, task, decision or agent id, a lock name, a config key)"},
			&cli.BoolFlag{Name: "changes", Usage: "only calls that changed the state (no reads, no refusals)"},
			&cli.BoolFlag{Name: "reads", Usage: "also show reads and refusals, recorded on the reads refs (refs/codex/reads/*) of this machine and of those synced with --reads"},
			&cli.StringFlag{Name: "error", Usage: "only calls that failed with this code"},
			&cli.BoolFlag{Name: "errors", Usage: "only calls that were refused or failed"},
			&cli.BoolFlag{Name: "unauthenticated", Usage: "only calls as an agent that did not present its valid credential (Codex-Auth none or invalid: believed under auth.agents=warn)"},
			&cli.IntFlag{Name: "limit", Aliases: []string{"n"}, Value: 50, Usage: "show at most `N` events (0: all)"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usageError{err: fmt.Errorf("log takes at most one revision")}
			}
			st, err := e.open()
			if err != nil {
				return err
			}
			defer st.Close()
			viewer, err := asFlag(c)
			if err != nil {
				return err
			}
			var entries []logEntry
			var cutOff string
			var cutOffAt time.Time
			limit := c.Int("limit")
			revs := []string{c.Args().First()}
			if c.Bool("reads") || c.Bool("errors") || c.IsSet("error") || c.Bool("unauthenticated") {
				reads, err := st.ReadsRefs()
				if err != nil {
					return tools.StoreError(err)
				}
				revs = append(revs, reads...)
			}
			err = st.EventsOf(c.Context, revs, func(ev gitstate.Event) bool {
				if ev.CutOff {
					cutOff, cutOffAt = ev.Commit, ev.Time
				}
				en := entryOf(forViewer(ev, viewer))
				if !matches(c, en) {
					return true
				}
				entries = append(entries, en)
				return limit <= 0 || len(entries) < limit
			})
			if errors.Is(err, gitstate.ErrNotFound) {
				rev := c.Args().First()
				// a read retention folded, whose own commit git pruned,
				// has no history to log: say where it went
				if ev, ferr := st.Event(c.Context, rev); ferr == nil && ev.FoldedIn != "" {
					return tools.Errorf(tools.ResourceNotFound, "%s is a read folded into %s (retention: its day's reads are one commit), and git dropped its own commit: `git codex show %s` shows it, `git codex log %s` the state it saw",
						ev.Commit, ev.FoldedIn, rev, ev.Get(gitstate.TrailerReadAt)).With("folded_in", ev.FoldedIn).With("read_at", ev.Get(gitstate.TrailerReadAt))
				}
				return tools.Errorf(tools.ResourceNotFound, "%q names no commit; list events with `git codex log`", rev)
			}
			if err != nil {
				return tools.StoreError(err)
			}
			if c.Bool("json") {
				if entries == nil {
					entries = []logEntry{}
				}
				return writeJSON(e.stdout, entries)
			}
			full := e.logShowsAll(entries)
			tp := e.table("COMMIT", "TIME", "TOOL", "ACTOR", "KIND", "SUMMARY")
			if !full {
				tp = e.table("COMMIT", "TIME", "KIND", "SUMMARY")
			}
			for _, en := range entries {
				result := en.Kind
				if en.Error != "" {
					result = en.Error
				}
				tp.AddColored(en.Commit[:12], func(s string) string { return e.paint(ansiYellow, s) })
				tp.AddField(e.when(en.Time))
				if full {
					tp.AddField(en.Tool)
					if mark := authMark(en); mark != "" {
						tp.AddColored(en.Actor+mark, func(s string) string { return e.paint(ansiRed, s) })
					} else {
						tp.AddField(en.Actor)
					}
				}
				tp.AddColored(result, func(s string) string { return e.paint(kindColor(en.Kind), s) })
				summary := en.Summary
				if en.Message != "" { // what went wrong, not only its code
					summary += " — " + en.Message
				}
				if en.Redacted != "" {
					summary += " [redacted: " + en.Redacted + "]"
				}
				if en.FoldedIn != "" {
					summary += " [folded into " + en.FoldedIn[:min(12, len(en.FoldedIn))] + "]"
				}
				tp.AddField(summary)
				tp.EndRow()
			}
			if err := tp.Render(); err != nil {
				return err
			}
			if cutOff != "" {
				fmt.Fprintf(e.stderr, "history cut off at %s (commit %s): a shallow fetch left out what came before; %s\n", cutOffAt.UTC().Format("2006-01-02 15:04 MST"), cutOff[:12], gitstate.FetchMoreHint)
			}
			return nil
		},
	}
}

// logMinSummary is the width below which the log's summary is too short
// to read (an actor alone, human:someone@example.com, takes 25).
const logMinSummary = 40

// logShowsAll says whether the log shows its TOOL and ACTOR columns: piped
// always (scripts read them), and on a terminal wide enough to leave the
// summary logMinSummary columns beside them. On a narrower one they are
// left out: the summary starts with the tool and names the actor, and an
// 80-column terminal left it 11 columns.
func (e *env) logShowsAll(entries []logEntry) bool {
	if !e.tty {
		return true
	}
	widths := []int{len("COMMIT"), len("TIME"), len("TOOL"), len("ACTOR"), len("KIND")}
	for _, en := range entries {
		result := en.Kind
		if en.Error != "" {
			result = en.Error
		}
		for i, s := range []string{en.Commit[:12], e.when(en.Time), en.Tool, en.Actor, result} {
			widths[i] = max(widths[i], displayWidth(s))
		}
	}
	used := len(columnGap) * len(widths)
	for _, w := range widths {
		used += w
	}
	return e.width-used >= logMinSummary
}

func matches(c *cli.Context, en logEntry) bool {
	switch {
	case c.IsSet("tool") && en.Tool != c.String("tool"):
		return false
	case c.IsSet("actor") && en.Actor != c.String("actor"):
		return false
	case c.IsSet("target") && (en.Target != c.String("target") || en.Kind != kindChange):
		return false
	case c.Bool("changes") && en.Kind != kindChange:
		return false
	case c.IsSet("error") && en.Error != c.String("error"):
		return false
	case c.Bool("errors") && en.Error == "":
		return false
	case c.Bool("unauthenticated") && !en.Unauthenticated():
		return false
	}
	return true
}

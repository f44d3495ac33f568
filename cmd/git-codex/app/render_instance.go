package app

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
)

// renderInstance prints the results of the instance commands (spawn, ps,
// peek, send, kill, abandon, cleanup, reap); ok is false for any other
// result.
func (e *env) renderInstance(data any) (ok bool, err error) {
	w := e.stdout
	switch d := data.(type) {
	case *instance.Spawned:
		if d.Status == tools.StatusFailed {
			fmt.Fprintf(w, "%s FAILED to start: %s\n", d.InstanceID, d.Error)
			return true, nil
		}
		fmt.Fprintf(w, "spawned %s (%s, %s): %s\nbranch:   %s\nworktree: %s\nsession:  %s (git codex attach %s)\n",
			d.InstanceID, d.Type, d.Agent, d.Status, d.Branch, d.WorktreePath, d.SessionName, d.InstanceID)
	case *instance.InstanceList:
		if len(d.Instances) == 0 {
			fmt.Fprintln(e.stderr, "no instances; start one with `git codex spawn <type> \"<task>\"`")
			return true, nil
		}
		tp := e.table("ID", "TYPE", "STATUS", "LIVE", "AGENT", "BRANCH", "SINCE")
		for _, v := range d.Instances {
			live := v.Live
			if v.PaneExitStatus != nil {
				live = fmt.Sprintf("%s (exit %d)", live, *v.PaneExitStatus)
			}
			if v.Live == instance.LiveElsewhere && v.Host != "" {
				live = fmt.Sprintf("%s (%s)", live, v.Host)
			}
			for _, f := range []string{v.ID, string(v.Type), v.Status, live, v.Launcher, v.Branch, e.when(v.UpdatedAt)} {
				tp.AddField(f)
			}
			tp.EndRow()
		}
		if err := tp.Render(); err != nil {
			return true, err
		}
		// why each one that failed did: its agent's last words, a screen
		// it stopped at
		for _, v := range d.Instances {
			if v.Status == tools.StatusFailed && v.StatusReason != "" {
				fmt.Fprintf(w, "%s FAILED: %s\n", v.ID, cut(v.StatusReason, 300))
			}
		}
		return true, nil
	case *instance.Peeked:
		if d.Saved {
			fmt.Fprintf(e.stderr, "(%s has no tmux session now: this is its last screen, saved when git codex ended it or found it dead)\n", d.ID)
		}
		fmt.Fprintln(w, strings.TrimRight(d.Screen, "\n"))
	case *instance.Sent:
		fmt.Fprintf(w, "submitted to %s (%s)\n", d.ID, strings.ReplaceAll(d.ConfirmedBy, "_", " "))
	case *instance.Ended:
		fmt.Fprintf(w, "%s is %s (session %s); `git codex cleanup` removes its worktree and branch, saving any work\n", d.ID, d.Status, d.Session)
	case *instance.CleanedUp:
		for _, id := range d.Failed {
			why := d.Why[id]
			if why == "" {
				why = "its session or its spawn died"
			}
			fmt.Fprintf(w, "%s: FAILED (%s)\n", id, why)
		}
		for _, id := range d.TimedOut {
			fmt.Fprintf(w, "%s: review timed out, TERMINATED\n", id)
		}
		verb := ""
		if d.DryRun {
			verb = "would be "
		}
		for _, it := range d.Items {
			fmt.Fprintf(w, "%s (%s): session %s%s, worktree %s%s, branch %s%s\n", it.ID, it.Status, verb, it.Session, verb, it.Worktree, verb, it.Branch)
			for _, r := range it.Rescued {
				fmt.Fprintf(w, "  work saved in %s\n", r)
			}
			if len(it.Ignored) > 0 {
				fmt.Fprintf(w, "  git-ignored files %smoved to %s: %s\n", verb, it.IgnoredSavedIn, strings.Join(it.Ignored, ", "))
			}
			for _, l := range it.StaleLocks {
				fmt.Fprintf(w, "  stale git lock %sremoved (no process holds it): %s\n", verb, l)
			}
			for _, l := range it.Lost {
				fmt.Fprintf(w, "  removed without saving (--force): %s\n", l)
			}
			if it.Error != "" {
				fmt.Fprintf(w, "  kept: %s\n", it.Error)
			}
		}
		for _, o := range d.Elsewhere {
			host := o.Host
			if host == "" {
				host = "an unnamed host"
			}
			fmt.Fprintf(w, "%s (%s): runs on another machine (%s, machine %s): left to its reap and cleanup\n", o.ID, o.Status, host, o.Machine)
		}
		if len(d.Items)+len(d.Failed)+len(d.TimedOut) == 0 {
			fmt.Fprintln(e.stderr, "nothing to clean up")
		}
	default:
		return false, nil
	}
	return true, nil
}

// cut shortens s to n bytes at most, on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

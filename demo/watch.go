package demo

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
)

// watcher prints the state's commits as they land: the audit trail is the
// demo's story. It also follows the loop: done once the coding agent sets
// itself COMPLETED (its pull request is open), failed once any agent's
// call fails.
type watcher struct {
	st   *gitstate.Store
	out  io.Writer
	last string // the newest commit printed
	// sessions are the tmux sessions of the instances seen spawned
	sessions []string
	done     bool
	failed   error
}

// pollEvery is how often the watcher looks at the state ref.
const pollEvery = 50 * time.Millisecond

// poll prints the commits that landed since the last poll, oldest first.
func (w *watcher) poll(ctx context.Context) {
	var evs []gitstate.Event
	err := w.st.Events(ctx, "", func(ev gitstate.Event) bool {
		if ev.Commit == w.last {
			return false
		}
		evs = append(evs, ev)
		return true
	})
	if err != nil || len(evs) == 0 {
		return
	}
	slices.Reverse(evs)
	for _, ev := range evs {
		fmt.Fprintf(w.out, "  %.8s  %s\n", ev.Commit, ev.Summary)
		w.follow(ev)
	}
	w.last = evs[len(evs)-1].Commit
}

// follow notes what an event means for the loop.
func (w *watcher) follow(ev gitstate.Event) {
	tool, actor := ev.Get(gitstate.TrailerTool), ev.Get(gitstate.TrailerActor)
	if s := ev.Get(gitstate.TrailerTarget); (tool == "spawn" || tool == "request_review") && s != "" && !slices.Contains(w.sessions, "codex-"+s) {
		w.sessions = append(w.sessions, "codex-"+s)
	}
	if strings.HasPrefix(actor, "human:") {
		return
	}
	if code := ev.Get(gitstate.TrailerError); code != "" && w.failed == nil {
		w.failed = fmt.Errorf("%s's call to %s failed with %s (%s)", actor, tool, code, ev.Summary)
	}
	if tool == "agent_set_status" && ev.Get(gitstate.TrailerActorType) == "coding" && ev.Get(gitstate.TrailerResult) == "ok" {
		w.done = true
	}
}

// await prints commits until the coder is done, an agent's call fails or
// the time is up.
func (w *watcher) await(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		w.poll(ctx)
		switch {
		case w.failed != nil:
			return w.failed
		case w.done:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("the coding agent has not finished after %s", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollEvery):
		}
	}
}

// showPanes prints the last lines of every agent's pane, for a loop that
// did not finish.
func (w *watcher) showPanes(ctx context.Context, tm *privateTmux) {
	for _, s := range w.sessions {
		screen, err := tm.runner.CaptureHistory(ctx, s, 200)
		if err != nil {
			fmt.Fprintf(w.out, "\n%s: %v\n", s, err)
			continue
		}
		fmt.Fprintf(w.out, "\n%s, its last lines:\n", s)
		lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
		if len(lines) > 15 {
			lines = lines[len(lines)-15:]
		}
		for _, l := range lines {
			fmt.Fprintf(w.out, "  | %s\n", strings.TrimRight(l, " "))
		}
	}
}

// explain says where to look afterwards.
func (w *watcher) explain(out io.Writer, ws *workspace, coder string, keep bool) {
	branch := "codex/" + coder
	if keep {
		fmt.Fprintf(out, "\nThe repository is kept. Look around:\n\n  cd %s\n", ws.repo)
	} else {
		fmt.Fprintln(out, "\nEverything the demo made is removed. Run `git codex demo --keep` to look around afterwards:")
		fmt.Fprintln(out)
	}
	for _, l := range [][2]string{
		{"git log refs/codex/state", "every step above: one commit per tool call, its trailers say who, what and how it went"},
		{"git codex log", "the same audit trail as a table (--changes, --errors, --tool, --actor)"},
		{"git log --notes=codex-reviews " + branch, "the coder's work, each reviewed commit with its review as a note"},
		{"git show " + branch + ":REVIEW_FEEDBACK.md", "the last feedback, as the coder received it"},
		{"git codex ps --all", "the instances and how they ended"},
		{"git codex ui", "the web page over the same state, any moment of it"},
	} {
		fmt.Fprintf(out, "  %-52s %s\n", l[0], l[1])
	}
	if keep {
		fmt.Fprintf(out, "\n`git codex cleanup` removes the coder's worktree (%s) when you are done.\n", ws.worktrees)
	}
}

// awaitOnly waits until session is the only session left (reviewers end
// their own sessions a moment after their feedback), for at most wait.
func (t *privateTmux) awaitOnly(ctx context.Context, session string, wait time.Duration) {
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(pollEvery) {
		ss := t.sessions(ctx)
		if len(ss) == 0 || (len(ss) == 1 && ss[0] == session) {
			return
		}
	}
}

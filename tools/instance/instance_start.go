package instance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tmux"
	"github.com/gitcodex/git-codex/tools"
)

// When an instance is up.
//
// An agent CLI in a fresh worktree can exit at once (a bad command line),
// exit after a second or two (no model API), or stop at a screen nobody
// sees (a trust dialog, a sign-in menu) and wait there for ever. None of
// that shows in "the pane still runs". What does show is the agent's own
// `git codex mcp` answering its initialize: the CLI got past its first
// screens and is wired to git codex. The server records that in the state
// (Registry.MarkUp: STARTING -> ACTIVE, in a commit of its own), so spawn
// waits for the instance's record to leave STARTING, watching the pane
// meanwhile, up to the start timeout:
//
//   - the record left STARTING: the agent is up (or someone ended it),
//     unless its pane shows a screen of its CLI that it stops at (Gemini
//     CLI, under load, started its servers behind its sign-in choice):
//     then it is FAILED as below, having done nothing;
//   - the pane died: FAILED with the exit status and the pane's last lines;
//   - the pane shows a screen its CLI stops at (screens.go): FAILED at once
//     with what it is, what to do once, and the pane's last lines;
//   - the timeout passed: FAILED with the pane's last lines.
//
// The state is the signal rather than a file the server writes because it
// is the truth spawn records anyway, it survives the spawner (a spawn that
// dies while waiting leaves an instance the agent itself marks ACTIVE), and
// every machine that syncs sees it. It costs one commit per instance.
//
// Launchers git codex does not know (agent.<name>.command) may run programs
// that never start git codex mcp (a shell, a script that calls `git codex
// call`): they are ACTIVE once their pane survived the start check, as
// before, unless agent.<name>.ready says mcp. A tool call made by the
// instance also makes it ACTIVE (markRunning).

// Readiness modes of a launcher (agent.<name>.ready).
const (
	ReadyMCP     = "mcp"     // up when its git codex mcp answered initialize (or it called a tool)
	ReadyStarted = "started" // up when its pane survived the start check
)

var readyModes = []string{ReadyMCP, ReadyStarted}

// defaultStartTimeout bounds the wait for an agent to connect: Claude Code
// connected in ~1 s here, Gemini CLI and Codex CLI in 7-8 s; a loaded
// machine takes several times that.
const defaultStartTimeout = 60

// blockedFor is how long a blocking screen must stay before spawn reports
// it: a CLI may flash a screen while it starts.
const blockedFor = time.Second

// startPoll is how often the wait looks at the state and the pane.
const startPoll = 100 * time.Millisecond

// startError is why an instance did not come up: its message is recorded
// as the instance's status reason.
type startError struct {
	msg string
	// screen is set when the agent waits at a screen of its CLI (it may
	// have connected meanwhile: it still does nothing)
	screen bool
}

func (e *startError) Error() string { return e.msg }

// waitUp waits until the instance is up, or fails saying why not (see
// above). The pane's screen is saved before an error is returned, so that
// `git codex peek` shows it after the session is gone.
func waitUp(ctx context.Context, f *tools.Followup, r tmux.Runner, a tools.Agent, l Launcher, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	root := mainWorkTree(f.Store)
	var seen BlockingScreen
	var since time.Time
	for {
		status, _ := statusOf(ctx, f.Store, a.ID)
		if status != tools.StatusStarting && status != tools.StatusActive && status != tools.StatusReviewing && status != "" {
			return nil // ended meanwhile: that stands
		}
		up := status == tools.StatusActive || status == tools.StatusReviewing
		s, err := Pane(ctx, r, a.TmuxSession)
		if err != nil {
			return &startError{msg: fmt.Sprintf("its tmux session %s went away before the agent connected to git codex", a.TmuxSession)}
		}
		if s.PaneDead {
			status, out := deadPaneOutput(ctx, r, a.TmuxSession, s)
			saveScreen(ctx, f.Store, r, a)
			if status < 0 {
				return &startError{msg: fmt.Sprintf("the agent (%s) exited before it connected to git codex: %s", l.Command, out)}
			}
			return &startError{msg: fmt.Sprintf("the agent (%s) exited with status %d before it connected to git codex: %s", l.Command, status, out)}
		}
		screen, _ := r.Capture(ctx, a.TmuxSession)
		// once connected, only the CLI's own screens count: a menu's
		// footer may be anything an agent at work shows
		if b, ok := BlockedAt(l.Name, screen); ok && !b.approval && !(up && b.cli == "") {
			if seen.What != b.What || since.IsZero() {
				seen, since = b, time.Now()
			} else if time.Since(since) >= blockedFor {
				saveScreen(ctx, f.Store, r, a)
				return &startError{msg: fmt.Sprintf("the agent (%s) waits at %s, which nobody answers in an unattended pane; to fix it once: %s. Its pane shows: %s",
					l.Command, b.What, strings.ReplaceAll(b.advice(root), "<id>", a.ID), lastLines(screen, 4)), screen: true}
			}
		} else {
			since = time.Time{}
			if up {
				return nil
			}
		}
		if time.Now().After(deadline) {
			saveScreen(ctx, f.Store, r, a)
			return &startError{msg: fmt.Sprintf("the agent (%s) did not connect to git codex within %s (its git codex mcp never answered an initialize); its pane shows: %s",
				l.Command, timeout, lastLines(screen, 4))}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(startPoll):
		}
	}
}

// statusOf reads an instance's status at the state's tip.
func statusOf(ctx context.Context, st *gitstate.Store, id string) (string, error) {
	var a tools.Agent
	err := st.View(ctx, func(sn *gitstate.Snapshot) error { return sn.Get(tools.AgentPath(id), &a) })
	return a.Status, err
}

// screensDir keeps the last screens of instances' panes that git codex
// killed or found dead (this machine only, like delegation transcripts:
// what an agent printed may hold anything).
func screensDir(gitDir string) string { return filepath.Join(gitDir, "codex", "screens") }

// savedScreenLines is how much of a pane's scrollback is kept.
const savedScreenLines = 200

// saveScreen keeps what an instance's pane shows (and some scrollback)
// before its session is killed, for `git codex peek`. Best effort: a pane
// that is gone has nothing to save.
func saveScreen(ctx context.Context, st tools.Dirs, r tmux.Runner, a tools.Agent) {
	screen, err := r.CaptureHistory(context.WithoutCancel(ctx), a.TmuxSession, savedScreenLines)
	if err != nil || strings.TrimSpace(screen) == "" {
		return
	}
	dir := screensDir(st.GitDir())
	if os.MkdirAll(dir, 0o700) != nil {
		return
	}
	_ = os.WriteFile(filepath.Join(dir, a.ID+".txt"), []byte(screen), 0o600)
}

// savedScreen is the last screen saved for an instance.
func savedScreen(st tools.Dirs, id string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(screensDir(st.GitDir()), id+".txt"))
	if err != nil {
		return "", false
	}
	return string(b), true
}

// killInstanceSession saves an instance's screen and kills its session,
// saying what became of it (KillSession).
func killInstanceSession(ctx context.Context, st tools.Dirs, tm tmux.Runner, a tools.Agent) string {
	if has, err := tm.HasSession(ctx, a.TmuxSession); err == nil && has {
		saveScreen(ctx, st, tm, a)
	}
	return KillSession(ctx, tm, a.TmuxSession)
}

// deathOf says why a running instance's session is no longer running: the
// agent's exit status and last words (saved for peek), or a session gone.
func deathOf(ctx context.Context, st tools.Dirs, tm tmux.Runner, a tools.Agent, s tmux.Session, found bool) string {
	if !found {
		return "its tmux session is gone (killed outside git codex, or its tmux server ended)"
	}
	status, out := deadPaneOutput(ctx, tm, a.TmuxSession, s)
	saveScreen(ctx, st, tm, a)
	if out == "" {
		out = "(nothing)"
	}
	if status < 0 {
		return "its agent exited; its pane's last lines: " + out
	}
	return fmt.Sprintf("its agent exited with status %d; its pane's last lines: %s", status, out)
}

// atScreen reports whether err says the agent waits at a screen of its
// CLI.
func atScreen(err error) bool {
	var se *startError
	return errors.As(err, &se) && se.screen
}

package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tmux"
)

// Live states of an instance's tmux session, as ps shows them.
const (
	LiveRunning = "running" // the session's pane runs the agent
	LiveDead    = "dead"    // the pane's process exited; the session stays for a look
	LiveMissing = "missing" // no such session (killed, or its tmux server is gone)
	LiveNone    = "-"       // ended and cleaned up: nothing should run
)

// getInstance reads an instance (an agent git codex runs), or fails with
// AGENT_NOT_FOUND, or INVALID_INPUT for an agent that is only registered.
func getInstance(c *Call, id string) (Agent, error) {
	a, err := getAgent(c.Tx, id)
	if err != nil {
		return Agent{}, err
	}
	if a.Status == "" {
		return Agent{}, Errorf(InvalidInput, "%s is a registered agent, not an instance git codex runs; list instances with `git codex ps`", id).With("agent_id", id)
	}
	return a, nil
}

// InstanceView is one instance as ps shows it: its record and the live
// state of its session.
type InstanceView struct {
	Agent
	Live           string `json:"live" jsonschema:"running, dead, missing, or - for an instance that ended and was cleaned up"`
	PaneExitStatus *int   `json:"pane_exit_status,omitempty"`
}

// InstanceList is what ps returns, sorted by id.
type InstanceList struct {
	Count     int            `json:"count"`
	Instances []InstanceView `json:"instances"`
}

// InstanceListIn is ps's input.
type InstanceListIn struct {
	All bool `json:"all,omitempty" jsonschema:"also instances that ended and were cleaned up"`
}

// InstanceListTool lists instances with the live state of their sessions.
var InstanceListTool = Define("instance_list", "instance.list",
	"List the agent instances git codex runs, with their status, branch, worktree and whether their tmux session is running, dead or missing.",
	CLI{Path: "ps"},
	func(ctx context.Context, c *Call, in InstanceListIn) (*InstanceList, error) {
		out := &InstanceList{Instances: []InstanceView{}}
		err := walkJSON(c.Tx, dirAgents, func(a Agent) {
			if a.Status != "" && (in.All || a.CleanedAt == nil) {
				out.Instances = append(out.Instances, InstanceView{Agent: a, Live: LiveNone})
			}
		})
		out.Count = len(out.Instances)
		c.Summarize("%s listed %d instance(s)", c.Caller.ID, out.Count)
		tm := tmuxFor(c.Config, c.Env)
		c.After(func(ctx context.Context, f *Followup) error {
			return fillLive(ctx, tm, out.Instances)
		})
		return out, err
	}).Hint(Hints{ReadOnly: true, Idempotent: true})

// fillLive sets the live state of each instance from one listing of the
// tmux server (outside the writer lock).
func fillLive(ctx context.Context, tm tmux.Runner, views []InstanceView) error {
	sessions, err := tm.List(ctx)
	if err != nil {
		return Errorf(InternalError, "list tmux sessions: %v", err)
	}
	byName := map[string]tmux.Session{}
	for _, s := range sessions {
		byName[s.Name] = s
	}
	for i := range views {
		v := &views[i]
		s, ok := byName[v.TmuxSession]
		switch {
		case ok && s.PaneDead:
			v.Live = LiveDead
			if s.PaneExitStatus >= 0 {
				v.PaneExitStatus = &s.PaneExitStatus
			}
		case ok:
			v.Live = LiveRunning
		case v.CleanedAt == nil:
			v.Live = LiveMissing
		}
	}
	return nil
}

// InstanceIDIn names one instance.
type InstanceIDIn struct {
	ID string `json:"id" jsonschema:"the instance's id"`
}

// PeekIn is peek's input.
type PeekIn struct {
	ID    string `json:"id" jsonschema:"the instance's id"`
	Lines int    `json:"lines,omitempty" jsonschema:"rows of scrollback above the screen to include (default 0)"`
}

// Peeked is what peek returns.
type Peeked struct {
	ID     string `json:"id"`
	Screen string `json:"screen"`
	// Saved is true when the session is gone and Screen is what it showed
	// when git codex killed it or found it dead.
	Saved bool `json:"saved,omitempty" jsonschema:"true when the session is gone and this is its last screen, saved when git codex ended it or found it dead"`
}

// Peek captures an instance's pane.
var Peek = Define("instance_peek", "instance.peek",
	"Show what an instance's tmux pane shows now (and some scrollback), without attaching; once its session is gone, the last screen git codex saved of it.",
	CLI{Path: "peek", Args: []string{"id"}},
	func(ctx context.Context, c *Call, in PeekIn) (*Peeked, error) {
		a, err := getInstance(c, in.ID)
		if err != nil {
			return nil, err
		}
		if in.Lines < 0 || in.Lines > 10000 {
			return nil, Errorf(InvalidInput, "lines must be 0-10000").With("field", "lines")
		}
		out := &Peeked{ID: a.ID}
		tm := tmuxFor(c.Config, c.Env)
		c.Target(a.ID)
		c.Summarize("%s peeked at %s", c.Caller.ID, a.ID)
		c.After(func(ctx context.Context, f *Followup) error {
			screen, err := tm.CaptureHistory(ctx, a.TmuxSession, in.Lines)
			if errors.Is(err, tmux.ErrNoSession) {
				// the screen git codex saved when it killed the session
				// or found it dead
				if saved, ok := savedScreen(f.Store, a.ID); ok {
					out.Screen, out.Saved = saved, true
					return nil
				}
				return Errorf(InstanceNotRunning, "%s has no tmux session (%s); its status is %s", a.ID, a.TmuxSession, a.Status).With("agent_id", a.ID)
			}
			out.Screen = screen
			return err
		})
		return out, nil
	}).Hint(Hints{ReadOnly: true, Idempotent: true})

// SendIn is send's input.
type SendIn struct {
	ID   string `json:"id" jsonschema:"the instance's id"`
	Text string `json:"text" jsonschema:"what to type into its pane; Enter is pressed after it"`
}

// Sent is what send returns.
type Sent struct {
	ID        string `json:"id"`
	Submitted bool   `json:"submitted" jsonschema:"true once the text was seen to leave the pane's input line"`
}

// nudgeWait bounds how long send watches the pane for the text to be
// taken: the wait ends as soon as it is, and on a loaded machine Gemini
// CLI took more than 3 s to show a typed line (a feedback nudge then went
// undelivered, its text left unsubmitted in the input).
const nudgeWait = 10 * time.Second

// inputWait bounds how long send waits for a pane to show its CLI's input
// line before it refuses to type (a screen being redrawn).
const inputWait = 5 * time.Second

// Send types a nudge into an instance's pane and confirms it was taken.
var Send = Define("instance_send", "instance.send",
	"Type a message into an instance's tmux pane and press Enter; fails with NUDGE_NOT_DELIVERED, typing nothing, when the pane is not at the agent's input (a dialog, a menu, a panel; for claude, codex and gemini their input line as they draw it), and unless the text is seen to leave the input line.",
	CLI{Path: "send", Args: []string{"id", "text"}},
	func(ctx context.Context, c *Call, in SendIn) (*Sent, error) {
		a, err := getInstance(c, in.ID)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(in.Text) == "" || strings.ContainsAny(in.Text, "\r\n") {
			return nil, Errorf(InvalidInput, "text must be one non-empty line").With("field", "text")
		}
		if ended(a.Status) {
			return nil, Errorf(InstanceNotRunning, "%s is %s; nothing reads its pane", a.ID, a.Status).With("agent_id", a.ID).With("status", a.Status)
		}
		if a.Status == StatusStarting {
			// whatever its pane shows is not the agent's input yet: a
			// trust dialog, a sign-in menu, where keys pick options
			return nil, Errorf(InstanceNotRunning, "%s is STARTING: its agent has not connected to git codex yet, so its pane is not at the agent's input; nothing was typed (see `git codex peek %s`)", a.ID, a.ID).
				With("agent_id", a.ID).With("status", a.Status)
		}
		out := &Sent{ID: a.ID}
		tm := tmuxFor(c.Config, c.Env)
		c.Target(a.ID)
		c.Summarize("%s nudged %s", c.Caller.ID, a.ID)
		c.After(func(ctx context.Context, f *Followup) error {
			if err := nudge(ctx, tm, a, in.Text); err != nil {
				return err
			}
			out.Submitted = true
			return nil
		})
		return out, nil
	})

// nudge types text into the pane, checks that it reached the input line,
// presses Enter and waits for it to leave that line: a nudge typed into a
// dead pane, or one the program never took, is an error, not "sent".
func nudge(ctx context.Context, tm tmux.Runner, a Agent, text string) error {
	s, err := paneOf(ctx, tm, a.TmuxSession)
	if err != nil || s.PaneDead {
		return Errorf(InstanceNotRunning, "%s's session %s is not running; nothing would read the nudge", a.ID, a.TmuxSession).With("agent_id", a.ID)
	}
	// never into a dialog or a menu: typed keys would pick its options
	if screen, err := tm.Capture(ctx, a.TmuxSession); err == nil {
		if b, ok := blockedAt(a.Launcher, screen); ok {
			return Errorf(NudgeNotDelivered, "%s's pane shows %s, not the agent's input; nothing was typed. Attach (`git codex attach %s`) to answer it; %s",
				a.ID, b.what, a.ID, strings.ReplaceAll(b.advice("the repository"), "<id>", a.ID)).With("agent_id", a.ID).With("screen", b.what)
		}
		// not while it works on a turn: wait for the turn to end
		if mark, busy := busyAt(screen); busy {
			if screen, ok := waitIdle(ctx, tm, a); !ok {
				return Errorf(NudgeNotDelivered, "%s is working on a turn (its pane shows %q) and did not finish within %s; nothing was typed. Send it again when it is at its input. Its pane shows: %s",
					a.ID, mark, busyWait, lastLines(screen, 4)).With("agent_id", a.ID).With("screen", "busy")
			}
		}
		// and only where the CLI's input line is (screens.go), which a
		// redrawing screen may take a moment to show under the cursor
		if known, _ := atInput(a.Launcher, "", ""); known {
			if line, ok := waitInput(ctx, tm, a); !ok {
				if s, err := tm.Capture(ctx, a.TmuxSession); err == nil {
					screen = s
				}
				return Errorf(NudgeNotDelivered, "%s's pane is not at its agent's input (%s's is %s; the cursor is on %q); nothing was typed. Its pane shows: %s; attach (`git codex attach %s`) to see it",
					a.ID, a.Launcher, inputLook(a.Launcher), strings.TrimSpace(line), lastLines(screen, 4), a.ID).With("agent_id", a.ID).With("screen", "not the input")
			}
		}
	}
	if err := tm.SendKeys(ctx, a.TmuxSession, text, false); err != nil {
		return Errorf(NudgeNotDelivered, "typing into %s: %v", a.TmuxSession, err).With("agent_id", a.ID)
	}
	probe := lastWords(text)
	if !waitLine(ctx, tm, a.TmuxSession, func(line string) bool { return strings.Contains(line, probe) }) {
		return Errorf(NudgeNotDelivered, "the text never showed on %s's input line; the agent may be busy or not reading input", a.ID).With("agent_id", a.ID)
	}
	if err := tm.SendKeys(ctx, a.TmuxSession, "", true); err != nil {
		return Errorf(NudgeNotDelivered, "pressing Enter in %s: %v", a.TmuxSession, err).With("agent_id", a.ID)
	}
	if !waitLine(ctx, tm, a.TmuxSession, func(line string) bool { return !strings.Contains(line, probe) }) {
		return Errorf(NudgeNotDelivered, "the text is still on %s's input line after Enter: not submitted", a.ID).With("agent_id", a.ID)
	}
	return nil
}

// busyWait is how long a nudge waits for an agent busy on a turn to
// finish it before it gives up, typing nothing.
const busyWait = 30 * time.Second

// waitIdle polls the pane until it no longer shows its CLI busy on a
// turn (busyAt), or busyWait passes; it returns the last screen.
func waitIdle(ctx context.Context, tm tmux.Runner, a Agent) (string, bool) {
	deadline := time.Now().Add(busyWait)
	for {
		screen, err := tm.Capture(ctx, a.TmuxSession)
		if err != nil {
			return "", false
		}
		if _, busy := busyAt(screen); !busy {
			return screen, true
		}
		if time.Now().After(deadline) {
			return screen, false
		}
		select {
		case <-ctx.Done():
			return screen, false
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitInput polls the pane until the cursor is on its CLI's input line
// (atInput), or inputWait passes; it returns the cursor's last line.
func waitInput(ctx context.Context, tm tmux.Runner, a Agent) (string, bool) {
	deadline := time.Now().Add(inputWait)
	for {
		above, line, err := tm.CursorLines(ctx, a.TmuxSession)
		if _, ok := atInput(a.Launcher, above, line); err == nil && ok {
			return line, true
		}
		if err != nil || time.Now().After(deadline) {
			return line, false
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// lastWords is the tail of a nudge that fits on one screen line, which is
// what the input line shows of a long one.
func lastWords(text string) string {
	text = strings.TrimSpace(text)
	if len(text) > 40 {
		text = text[len(text)-40:]
	}
	return text
}

// waitLine polls the pane's cursor line until ok or nudgeWait passes.
func waitLine(ctx context.Context, tm tmux.Runner, session string, ok func(string) bool) bool {
	deadline := time.Now().Add(nudgeWait)
	for {
		line, err := tm.CursorLine(ctx, session)
		if err == nil && ok(line) {
			return true
		}
		if err != nil || time.Now().After(deadline) {
			return false
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// Ended is what kill and abandon return.
type Ended struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	// Session says what became of the tmux session: killed, or gone.
	Session string `json:"session"`
}

// Kill stops an instance: TERMINATED, its session killed.
var Kill = Define("instance_kill", "instance.kill",
	"Stop an instance: it becomes TERMINATED and its tmux session is killed. Its worktree and branch stay until `git codex cleanup`, which saves any work in them first.",
	CLI{Path: "kill", Args: []string{"id"}},
	func(ctx context.Context, c *Call, in InstanceIDIn) (*Ended, error) {
		return endInstance(c, in.ID, StatusTerminated, "killed by "+c.Caller.ID)
	})

// Abandon gives up on an instance's work: ABANDONED, its session killed.
var Abandon = Define("instance_abandon", "instance.abandon",
	"Give up on an instance's approach: it becomes ABANDONED and its tmux session is killed; `git codex cleanup` then removes its worktree and branch, saving any work in them first.",
	CLI{Path: "abandon", Args: []string{"id"}},
	func(ctx context.Context, c *Call, in InstanceIDIn) (*Ended, error) {
		return endInstance(c, in.ID, StatusAbandoned, "abandoned by "+c.Caller.ID)
	})

// endInstance records an instance's end, then (after the commit: a kill
// cannot be undone) kills its session.
func endInstance(c *Call, id, status, reason string) (*Ended, error) {
	a, err := getInstance(c, id)
	if err != nil {
		return nil, err
	}
	if ended(a.Status) {
		return nil, Errorf(InvalidAgentState, "%s has already ended (%s)", a.ID, a.Status).With("agent_id", a.ID).With("status", a.Status)
	}
	if err := setStatus(c, &a, status, reason); err != nil {
		return nil, err
	}
	c.Target(a.ID)
	c.Summarize("%s ended %s: %s", c.Caller.ID, a.ID, status)
	out := &Ended{ID: a.ID, Status: status}
	tm := tmuxFor(c.Config, c.Env)
	c.After(func(ctx context.Context, f *Followup) error {
		out.Session = killInstanceSession(ctx, f.Store, tm, a)
		return nil
	})
	return out, nil
}

// setStatus writes an instance's new status (and its end, if final). A
// reviewer that ends while it holds its coder's active review (killed,
// dead, or never started) frees it, and the coder waits no more.
func setStatus(c *Call, a *Agent, status, reason string) error {
	now := c.Tx.Now()
	a.Status, a.StatusReason, a.UpdatedAt, a.UpdatedBy, a.Clock = status, reason, now, c.Caller.ID, c.Tx.Clock()
	if ended(status) && a.EndedAt == nil {
		a.EndedAt = &now
	}
	if err := c.Tx.Put(agentPath(a.ID), *a); err != nil {
		return err
	}
	if !ended(status) || a.ReviewOf == "" {
		return nil
	}
	var active ActiveReview
	if err := c.Tx.Get(activeReviewPath(a.ReviewOf), &active); err != nil || active.Claim == nil || active.Claim.Holder != a.ID {
		return nil
	}
	coder, err := getAgent(c.Tx, a.ReviewOf)
	if err != nil {
		return nil
	}
	next := coder.Status
	if next == StatusWaitingReview {
		next = StatusActive
	}
	return endReview(c, coder.ID, a.ID, next)
}

// killSession kills a session and says what became of it.
func killSession(ctx context.Context, tm tmux.Runner, name string) string {
	has, err := tm.HasSession(ctx, name)
	if err != nil || !has {
		return "gone"
	}
	if err := tm.Kill(ctx, name); err != nil {
		return fmt.Sprintf("kill failed: %v", err)
	}
	return "killed"
}

// AttachTarget is the tmux server and session of an instance, read from a
// snapshot, for `git codex attach` (which hands the terminal to tmux and
// so is no tool call).
func AttachTarget(sn *gitstate.Snapshot, id string) (tmux.Runner, string, error) {
	var a Agent
	if err := sn.Get(agentPath(id), &a); err != nil || a.Status == "" {
		return tmux.Runner{}, "", Errorf(AgentNotFound, "no instance %q; list them with `git codex ps`", id).With("agent_id", id)
	}
	if ended(a.Status) {
		return tmux.Runner{}, "", Errorf(InstanceNotRunning, "%s is %s; see its last screen with `git codex peek %s` while its session lasts", id, a.Status, id).With("agent_id", id)
	}
	cfg, err := loadConfig(sn)
	if err != nil {
		return tmux.Runner{}, "", err
	}
	return tmuxFor(cfg, Env{}), a.TmuxSession, nil
}

// SetStatusIn is agent_set_status's input.
type SetStatusIn struct {
	Status string `json:"status" jsonschema:"COMPLETED when your work is done, or ACTIVE"`
	Reason string `json:"reason,omitempty" jsonschema:"why, in a line"`
}

// SetStatus lets an instance change its own status, and only its own:
// COMPLETED when its work is done, ACTIVE to take it up again. The review
// loop's statuses are set by the review loop.
var SetStatus = Define("agent_set_status", "agent.set_status",
	"Set your own status (instances git codex runs): COMPLETED when your work is done, ACTIVE to go on. Only your own; WAITING_REVIEW and REVIEWING are the review loop's.",
	CLI{Path: "agent set-status", Args: []string{"status"}},
	func(ctx context.Context, c *Call, in SetStatusIn) (*Agent, error) {
		a := c.Agent
		if a == nil || a.Status == "" {
			return nil, Errorf(PermissionDenied, "only instances git codex runs have a status to set; see `git codex ps`").With("agent_type", string(c.Caller.Type))
		}
		if in.Status != StatusCompleted && in.Status != StatusActive {
			return nil, Errorf(InvalidInput, "status %q: set COMPLETED or ACTIVE (the review loop sets the others)", in.Status).With("field", "status")
		}
		if ended(a.Status) || a.Status == StatusWaitingReview || a.Status == StatusReviewing || a.Status == StatusStarting {
			return nil, Errorf(InvalidAgentState, "%s is %s; it cannot become %s now", a.ID, a.Status, in.Status).With("agent_id", a.ID).With("status", a.Status)
		}
		if err := setStatus(c, a, in.Status, in.Reason); err != nil {
			return nil, err
		}
		c.Target(a.ID)
		c.Summarize("%s is %s", a.ID, in.Status)
		return a, nil
	})

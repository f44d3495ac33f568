package instance

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/tmux"
	"github.com/gitcodex/git-codex/tools"
)

// What a nudge that was not confirmed saw (NUDGE_NOT_DELIVERED's
// details.seen), after typing: stable words for scripts and the watcher.
const (
	seenNotShown   = "text_not_shown"  // the typed text never showed on the input line
	seenEnterLeft  = "enter_not_taken" // the text stayed in the input through every Enter
	seenDropped    = "line_dropped"    // it left the input and no turn followed, also when typed again
	seenUnread     = "queued_unread"   // the terminal holds the line; the program has not read it
	seenPaneFailed = "pane_unreadable" // the pane could not be read after typing
)

// Bounds of a nudge's confirmation.
const (
	// nudgeWait bounds how long a nudge watches the pane after Enter for
	// the line to be taken: on a loaded machine Gemini CLI took more than
	// 3 s to echo a line; the wait ends as soon as it is.
	nudgeWait = 10 * time.Second
	// enterAgain is how long a line may sit in the input after Enter
	// before Enter is pressed again (Gemini CLI drops an Enter that
	// follows typed text too closely); enters bounds the presses.
	enterAgain = 1500 * time.Millisecond
	enters     = 3
	// enterAfterText is how long after the typed text shows on the input
	// line the first Enter waits. Gemini CLI takes an Enter it handles
	// within 30 ms of the last typed key for a newline in the input, not
	// a submission (bufferFastReturn, FAST_RETURN_TIMEOUT in its
	// KeypressContext, when the kitty keyboard protocol is off, as under
	// tmux 3.3); the text on the screen means the CLI has handled its
	// keys, so an Enter sent this long after the text showed is handled
	// at least this long after them.
	enterAfterText = 100 * time.Millisecond
	// typings bounds how often the line is typed: once more when it left
	// the input and no turn followed (Gemini CLI's redraw after a turn
	// drops what is typed meanwhile).
	typings = 2
	// inputWait bounds how long send waits for a pane to show its CLI's
	// input line before it refuses to type (a screen being redrawn).
	inputWait = 5 * time.Second
	// settleFor is how long a pane must stay unchanged before a line is
	// typed into it (a redraw under way drops keys); settling waits at
	// most inputWait, and types anyway after it.
	settleFor = 300 * time.Millisecond
	// busyWait is how long a nudge waits for an agent busy on a turn to
	// finish it before it gives up, typing nothing.
	busyWait = 30 * time.Second
)

// Nudge types text into an instance's pane, presses Enter, and confirms
// that the agent took the line; how says what showed it (Sent.ConfirmedBy).
// Nothing is typed into a dead pane, a dialog or menu, or anything but the
// CLI's input line. After Enter, a line left in the input gets Enter
// again, and a line that left the input with no turn following is typed
// once more; otherwise it fails with NUDGE_NOT_DELIVERED, details.seen
// saying what the pane showed: a Nudge is never reported taken on the
// evidence of keys typed alone.
func Nudge(ctx context.Context, tm tmux.Runner, a tools.Agent, text string) (how string, err error) {
	for typing := 1; ; typing++ {
		if err := readyForNudge(ctx, tm, a); err != nil {
			return "", err
		}
		before, err := tm.ReadScreen(ctx, a.TmuxSession)
		if err != nil {
			return "", tools.Errorf(tools.NudgeNotDelivered, "reading %s's pane: %v; nothing was typed", a.ID, err).With("agent_id", a.ID)
		}
		how, seen, err := typeLine(ctx, tm, a, before, text)
		if err != nil || seen == "" {
			return how, err
		}
		if seen == seenDropped && typing < typings {
			continue
		}
		return "", notTaken(ctx, tm, a, seen, typing)
	}
}

// readyForNudge checks, outside the writer lock, that the pane waits at
// the agent's input: alive, no dialog or menu (keys typed there pick its
// options), no turn under way (waited for, busyWait), the cursor on the
// CLI's input line (screens.go; a redrawing screen may take a moment to
// show it), and the screen settled.
func readyForNudge(ctx context.Context, tm tmux.Runner, a tools.Agent) error {
	s, err := Pane(ctx, tm, a.TmuxSession)
	if err != nil || s.PaneDead {
		return tools.Errorf(tools.InstanceNotRunning, "%s's session %s is not running; nothing would read the nudge", a.ID, a.TmuxSession).With("agent_id", a.ID)
	}
	screen, err := tm.Capture(ctx, a.TmuxSession)
	if err != nil {
		return tools.Errorf(tools.NudgeNotDelivered, "reading %s's pane: %v; nothing was typed", a.ID, err).With("agent_id", a.ID)
	}
	if b, ok := BlockedAt(a.Launcher, screen); ok {
		return tools.Errorf(tools.NudgeNotDelivered, "%s's pane shows %s, not the agent's input; nothing was typed. Attach (`git codex attach %s`) to answer it; %s",
			a.ID, b.What, a.ID, strings.ReplaceAll(b.advice("the repository"), "<id>", a.ID)).With("agent_id", a.ID).With("screen", b.What)
	}
	if mark, busy := BusyAt(screen); busy {
		if screen, ok := waitIdle(ctx, tm, a); !ok {
			return tools.Errorf(tools.NudgeNotDelivered, "%s is working on a turn (its pane shows %q) and did not finish within %s; nothing was typed. Send it again when it is at its input. Its pane shows: %s",
				a.ID, mark, busyWait, lastLines(screen, 4)).With("agent_id", a.ID).With("screen", "busy")
		}
	}
	if known, _ := atInput(a.Launcher, "", ""); known {
		if line, ok := waitInput(ctx, tm, a); !ok {
			if s, err := tm.Capture(ctx, a.TmuxSession); err == nil {
				screen = s
			}
			return tools.Errorf(tools.NudgeNotDelivered, "%s's pane is not at its agent's input (%s's is %s; the cursor is on %q); nothing was typed. Its pane shows: %s; attach (`git codex attach %s`) to see it",
				a.ID, a.Launcher, inputLook(a.Launcher), strings.TrimSpace(line), lastLines(screen, 4), a.ID).With("agent_id", a.ID).With("screen", "not the input")
		}
		settle(ctx, tm, a.TmuxSession)
	}
	return nil
}

// typeLine types text at the input, presses Enter, and watches the pane
// until the line is taken (how), or nudgeWait passes (seen says what the
// pane showed then). Enter is pressed again while the text sits in the
// input.
func typeLine(ctx context.Context, tm tmux.Runner, a tools.Agent, before tmux.Screen, text string) (how, seen string, err error) {
	if err := tm.SendKeys(ctx, a.TmuxSession, text, false); err != nil {
		return "", "", tools.Errorf(tools.NudgeNotDelivered, "typing into %s: %v", a.TmuxSession, err).With("agent_id", a.ID)
	}
	probe := lastWords(text)
	if !waitLine(ctx, tm, a.TmuxSession, func(line string) bool { return strings.Contains(line, probe) }) {
		return "", seenNotShown, nil
	}
	select { // (a cancelled ctx: the loop below says what was seen)
	case <-ctx.Done():
	case <-time.After(enterAfterText):
	}
	known, _ := atInput(a.Launcher, "", "")
	pressed, last, typed := 0, time.Time{}, time.Now()
	var again enterWatch
	deadline := typed.Add(nudgeWait)
	for {
		now, err := tm.ReadScreen(ctx, a.TmuxSession)
		if err != nil {
			return "", seenPaneFailed, nil
		}
		_, line := now.CursorRow()
		inInput := strings.Contains(line, probe)
		switch {
		case pressed == 0:
			// nothing submitted yet: a turn the CLI started on its
			// own is no sign of this line
		case known:
			if how, ok := lineTaken(a.Launcher, before, now, text); ok {
				return how, "", nil
			}
		case !inInput:
			// a program git codex knows nothing of: the line left the
			// cursor's line; did the program read it?
			// (a terminal this process cannot ask: all it knows is that)
			n, err := tm.InputPending(ctx, a.TmuxSession)
			if err != nil {
				return takenLeft, "", nil
			}
			if n == 0 {
				return takenRead, "", nil
			}
		}
		// Enter while the text sits in the input: at once, then again
		// after enterAgain once the program is done with the last one
		// (nudge_enter.go), enters times at most; never into an input
		// the text left (Enter was taken, or the line lost)
		if inInput && pressed < enters && (pressed == 0 || time.Since(last) >= enterAgain && again.dropped(ctx, tm, a.TmuxSession) && stillIn(ctx, tm, a.TmuxSession, probe)) {
			if err := tm.SendKeys(ctx, a.TmuxSession, "", true); err != nil {
				return "", "", tools.Errorf(tools.NudgeNotDelivered, "pressing Enter in %s: %v", a.TmuxSession, err).With("agent_id", a.ID)
			}
			pressed, last = pressed+1, time.Now()
			if pressed == 1 {
				deadline = time.Now().Add(nudgeWait)
			}
		}
		// the text gone before any Enter: a redraw wiped it, and
		// nothing was submitted; no need to wait for a sign
		if pressed == 0 && !inInput && time.Since(typed) >= enterAgain {
			return "", seenDropped, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			switch {
			case inInput:
				return "", seenEnterLeft, nil
			case known || pressed == 0:
				return "", seenDropped, nil
			}
			return "", seenUnread, nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// notTaken is the error for a line not confirmed taken: what the pane
// showed, in words and in details.seen.
func notTaken(ctx context.Context, tm tmux.Runner, a tools.Agent, seen string, typings int) error {
	screen, _ := tm.Capture(ctx, a.TmuxSession)
	var what string
	switch seen {
	case seenNotShown:
		what = "the typed text never showed on its input line (the agent may be busy or not reading input); it may sit there now"
	case seenEnterLeft:
		what = "the text stayed in its input through " + strconv.Itoa(enters) + " presses of Enter: not submitted, and left there"
	case seenDropped:
		what = "the text left its input but the agent showed no sign of taking it (no echo in its transcript, no turn started), typed " + strconv.Itoa(typings) + " time(s)"
	case seenUnread:
		what = "its terminal holds the line, but the program has not read it within " + nudgeWait.String() + " (busy in a tool call?); it reads it when it next reads input"
	default:
		what = "its pane could not be read after typing"
	}
	return tools.Errorf(tools.NudgeNotDelivered, "%s: %s. Its pane shows: %s; look with `git codex peek %s`", a.ID, what, lastLines(screen, 4), a.ID).
		With("agent_id", a.ID).With("seen", seen)
}

// waitIdle polls the pane until it no longer shows its CLI busy on a
// turn (BusyAt), or busyWait passes; it returns the last screen.
func waitIdle(ctx context.Context, tm tmux.Runner, a tools.Agent) (string, bool) {
	deadline := time.Now().Add(busyWait)
	for {
		screen, err := tm.Capture(ctx, a.TmuxSession)
		if err != nil {
			return "", false
		}
		if _, busy := BusyAt(screen); !busy {
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
func waitInput(ctx context.Context, tm tmux.Runner, a tools.Agent) (string, bool) {
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

// settle waits until the pane stays the same for settleFor (or inputWait
// passes): a CLI redrawing its screen after a turn drops keys typed
// meanwhile.
func settle(ctx context.Context, tm tmux.Runner, session string) {
	deadline := time.Now().Add(inputWait)
	prev, err := tm.ReadScreen(ctx, session)
	for err == nil && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(settleFor):
		}
		now, err2 := tm.ReadScreen(ctx, session)
		if err2 != nil || sameScreen(prev, now) {
			return
		}
		prev = now
	}
}

// sameScreen reports whether two reads of a pane show the same.
func sameScreen(a, b tmux.Screen) bool {
	return a.History == b.History && a.CursorX == b.CursorX && a.CursorY == b.CursorY && a.Text() == b.Text()
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

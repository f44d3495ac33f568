package instance

import (
	"context"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/tmux"
)

// A line still on a CLI's input line after Enter is not proof that the
// Enter was dropped: on a loaded machine Gemini CLI took the Enter, and
// then seconds to redraw its input, and an Enter pressed again meanwhile
// submitted the line a second time (two turns for one nudge: seen in
// agents_gemini_review under load, its stand-in's log holding two
// requests with the line 0.07 s and 0.8 s apart; the second turn took
// the scripted answer meant for the first, which then had none and
// stayed busy in retries). So Enter is pressed again only once the
// program has read every key typed (none waiting in its terminal) and is
// waiting again, its processes asleep (tmux.PaneAsleep), the same ones,
// for enterQuiet: an Enter it took would have been acted on by then, its
// input emptied.
const enterQuiet = 150 * time.Millisecond

// enterWatch follows a pane between presses of Enter.
type enterWatch struct {
	set   string    // the processes last seen asleep
	since time.Time // since when they have been
}

// dropped reports whether the program in a pane is done with every key
// typed into it (above). Where that cannot be known (no process table,
// no access to the pane's terminal) it answers true: the time since the
// last press alone decides, as it did before.
func (w *enterWatch) dropped(ctx context.Context, tm tmux.Runner, session string) bool {
	if n, err := tm.InputPending(ctx, session); err == nil && n > 0 {
		w.set = ""
		return false
	}
	s, err := Pane(ctx, tm, session)
	if err != nil {
		return true
	}
	set, asleep, known := tmux.PaneAsleep(s.PanePID)
	switch {
	case !known:
		return true
	case !asleep:
		w.set = ""
		return false
	case set != w.set:
		w.set, w.since = set, time.Now()
		return false
	}
	return time.Since(w.since) >= enterQuiet
}

// stillIn reports whether the pane's cursor line still holds probe, read
// again after the program was seen done: a redraw it made since the
// screen was last read would have emptied it.
func stillIn(ctx context.Context, tm tmux.Runner, session, probe string) bool {
	line, err := tm.CursorLine(ctx, session)
	return err == nil && strings.Contains(line, probe)
}

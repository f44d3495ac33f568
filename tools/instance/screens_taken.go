package instance

import (
	"strings"
	"unicode"

	"github.com/gitcodex/git-codex/tmux"
)

// How the built-in CLIs show that they took a submitted line, as the
// pinned Claude Code, Codex CLI and Gemini CLI draw it in a pane (captured
// against tools/modelapi, screens in testdata/screens): the input empties,
// the line is echoed into the transcript above the input box with the
// CLI's mark for a person's message ("❯ " Claude Code, "› " Codex CLI,
// " > " Gemini CLI), and a turn starts, its busy mark (busyMarks) on the
// status line. The input emptying alone proves nothing: Gemini CLI empties
// its input for a moment before it echoes a line (0.7 s unloaded, seconds
// under load), and right after a turn it redraws its input, dropping what
// was typed during the redraw; the line then leaves the input and nothing
// follows. Neither does the cursor leaving the line: so it does when a
// program that reads lines is busy elsewhere and the terminal only queues
// the line (tmux.InputPending tells those apart).

// Ways a nudge is confirmed taken (Sent.ConfirmedBy).
const (
	takenBusy = "turn_started" // the CLI's busy mark showed
	takenEcho = "echoed"       // the line showed in its transcript
	takenRead = "read"         // the program read it from its terminal
	takenLeft = "left_input"   // it left the cursor's line (a program git codex knows nothing more of)
)

// lineTaken reports whether a built-in CLI's pane, now, shows that it took
// the line text submitted since before (the pane at its empty input just
// before the line was typed): its busy mark, or one more echo of the line
// in the rows above the input than before had, counting out the rows that
// scrolled away since (scrolledBy). The echo is counted only
// while the input is empty again (the line still in the input would count
// itself) and in the rows above the cursor (the input box is below them).
func lineTaken(cli string, before, now tmux.Screen, text string) (string, bool) {
	if _, busy := BusyAt(now.Text()); busy {
		return takenBusy, true
	}
	above, line := now.CursorRow()
	if !inputEmpty(cli, above, line) {
		return "", false
	}
	old := Transcript(before)
	if scrolled := scrolledBy(before, now); scrolled < len(old) {
		old = old[scrolled:]
	} else {
		old = nil
	}
	want := squeeze(text)
	if want == "" {
		return "", false
	}
	if strings.Count(squeeze(strings.Join(Transcript(now), "\n")), want) > strings.Count(squeeze(strings.Join(old, "\n")), want) {
		return takenEcho, true
	}
	return "", false
}

// Transcript is the rows of a screen above its cursor's row: the CLI's
// Transcript, and its input box's top.
func Transcript(s tmux.Screen) []string {
	if s.CursorY <= 0 || s.CursorY > len(s.Rows) {
		return nil
	}
	return s.Rows[:s.CursorY]
}

// inputEmpty reports whether the cursor is on a built-in CLI's input line
// with nothing typed in it: Codex CLI and Gemini CLI show their
// placeholder there (atInput knows them only so), Claude Code its bare
// "❯" under the input box's rule.
func inputEmpty(cli, above, line string) bool {
	known, ok := atInput(cli, above, line)
	if !known || !ok {
		return false
	}
	if cli == "claude" {
		return strings.TrimSpace(line) == "❯"
	}
	return true
}

// squeeze drops every space from s: a line echoed into a transcript is
// wrapped and indented as the pane's width wants, and compared so it is
// the same line whatever the wrapping.
func squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// inputTail is how many rows right above a CLI's input line it redraws in
// place (status, hints, the input box's top): not transcript to align.
const inputTail = 4

// scrolledBy is how many rows the transcript moved up from before to now.
// The pane's history counts rows that scrolled off a full screen, but
// Codex CLI scrolls its transcript in a region above its input (tmux
// keeps no history of those), so the rows are matched instead: the
// smallest shift at which now's top rows are before's (some text among
// them), the rows redrawn just above the input left out. With no such
// shift, the screen moved wholly (more output than it holds) or was
// redrawn: the history's count if it grew, else all of before's rows.
func scrolledBy(before, now tmux.Screen) int {
	b, n := Transcript(before), Transcript(now)
	for k := 0; k < len(b); k++ {
		m := min(len(b)-k, len(n)) - inputTail
		if m < 3 {
			break
		}
		same, text := true, false
		for i := 0; i < m && same; i++ {
			same = n[i] == b[k+i]
			text = text || (strings.TrimSpace(n[i]) != "" && !isRule(n[i]))
		}
		if same && text {
			return k
		}
	}
	if d := now.History - before.History; d > 0 {
		return d
	}
	return len(b)
}

package instance

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/tmux"
)

// loadFrames reads testdata/screens/NAME.txt: screens of a pinned CLI's
// pane recorded as a line was typed and submitted against tools/modelapi,
// each headed "=== frame N cursor X,Y history H" (the recorder's frame
// number, the cursor, the pane's history size), keyed by frame number.
func loadFrames(t *testing.T, name string) map[int]tmux.Screen {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "screens", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	frames := map[int]tmux.Screen{}
	for _, f := range strings.Split(string(b), "=== frame ")[1:] {
		head, body, _ := strings.Cut(f, "\n")
		var n int
		var s tmux.Screen
		if _, err := fmt.Sscanf(head, "%d cursor %d,%d history %d", &n, &s.CursorX, &s.CursorY, &s.History); err != nil {
			t.Fatalf("%s: frame header %q: %v", name, head, err)
		}
		s.Rows = strings.Split(strings.TrimSuffix(body, "\n"), "\n")
		frames[n] = s
	}
	return frames
}

// A submitted line counts as taken only once the pinned CLI shows it took
// it (its busy mark, or one more echo in its transcript): not while the
// text sits in the input, nor when the input merely emptied (Gemini CLI
// does that for a moment before it echoes a line, and for good when a
// redraw dropped the line), nor on a screen that did not change. A line
// sent again is told from its earlier echo, whether the earlier one
// scrolled into the history (Claude Code, Gemini CLI) or off a region
// that keeps none (Codex CLI).
func TestLineTaken(t *testing.T) {
	const text = "Please check your status."
	for _, c := range []struct {
		cli, file string
		frame     int
		want      string // "" not taken
	}{
		{"claude", "claude-first", 0, ""},        // the screen before: nothing changed
		{"claude", "claude-first", 2, ""},        // typed, in the input
		{"claude", "claude-first", 3, takenBusy}, // echoed, "esc to interrupt"
		{"claude", "claude-first", 4, takenEcho}, // the turn over: the echo stays
		{"claude", "claude-again", 1, ""},        // the earlier echo is no new one
		{"claude", "claude-again", 2, takenBusy}, //
		{"claude", "claude-again", 3, takenEcho}, // the earlier echo scrolled away
		{"codex", "codex-first", 0, ""},          //
		{"codex", "codex-first", 1, ""},          // typed
		{"codex", "codex-first", 2, takenBusy},   // echoed, "esc to interrupt"
		{"codex", "codex-first", 4, takenEcho},   //
		{"codex", "codex-again", 1, takenBusy},   //
		{"codex", "codex-again", 3, takenEcho},   // the earlier echo scrolled off its region
		{"codex", "codex-enter-dropped", 1, ""},  // Enter too close to the text: ignored
		{"gemini", "gemini-first", 0, ""},        //
		{"gemini", "gemini-first", 1, ""},        // typed
		{"gemini", "gemini-first", 2, ""},        // the input emptied, nothing echoed yet
		{"gemini", "gemini-first", 3, ""},        // redrawing
		{"gemini", "gemini-first", 4, takenBusy}, // echoed, "esc to cancel"
		{"gemini", "gemini-first", 9, takenEcho}, // the turn over
		{"gemini", "gemini-again", 1, ""},        //
		{"gemini", "gemini-again", 4, takenBusy}, //
		{"gemini", "gemini-again", 8, takenEcho}, //
	} {
		frames := loadFrames(t, c.file)
		got, ok := lineTaken(c.cli, frames[0], frames[c.frame], text)
		if ok != (c.want != "") || got != c.want {
			t.Errorf("%s frame %d: lineTaken = %q, %v; want %q", c.file, c.frame, got, ok, c.want)
		}
	}
}

// The input line with nothing typed in it, as each pinned CLI draws it.
func TestInputEmpty(t *testing.T) {
	const rule = "────────────────────────────────"
	for _, c := range []struct {
		cli, above, line string
		want             bool
	}{
		{"claude", rule, "❯", true},
		{"claude", rule, "❯ Please check your status.", false},
		{"claude", "", "❯", false}, // not under the input box's rule: the transcript
		{"codex", "", "› Ask Codex to do anything", true},
		{"codex", "", "› Please check your status.", false},
		{"gemini", "", " >   Type your message or @path/to/file", true},
		{"gemini", "", " > Please check your status.", false},
		{"mine", "", "$", false},
	} {
		if got := inputEmpty(c.cli, c.above, c.line); got != c.want {
			t.Errorf("inputEmpty(%s, %q, %q) = %v, want %v", c.cli, c.above, c.line, got, c.want)
		}
	}
}

// Rows are matched to find how far a transcript scrolled; with no match,
// the history's growth, else all of it.
func TestScrolledBy(t *testing.T) {
	// the transcript, then what a CLI draws above its input line
	screen := func(history int, transcript ...string) tmux.Screen {
		r := append(transcript, "hint", "────", "status", "", "> input", "footer")
		return tmux.Screen{Rows: r, CursorY: len(r) - 2, History: history}
	}
	before := screen(0, "a", "b", "c", "d", "e", "f", "> x", "")
	for _, c := range []struct {
		name string
		now  tmux.Screen
		want int
	}{
		{"unchanged", before, 0},
		{"two rows up", screen(0, "c", "d", "e", "f", "> x", "", "> y", ""), 2},
		{"all new, history grew", screen(30, "p", "q", "r", "s", "t", "u", "v", ""), 30},
		{"all new, no history", screen(0, "p", "q", "r", "s", "t", "u", "v", ""), 12},
	} {
		if got := scrolledBy(before, c.now); got != c.want {
			t.Errorf("%s: scrolledBy = %d, want %d", c.name, got, c.want)
		}
	}
}

package instance

import (
	"strings"
	"testing"
)

// A CLI busy on a turn is told by its status line near the bottom, as the
// pinned Claude Code, Codex CLI and Gemini CLI draw it; the same words
// higher up, in the transcript, are not its status.
func TestBusyAt(t *testing.T) {
	transcript := strings.Repeat("a line of the agent's answer\n", 8)
	cases := []struct {
		screen string
		busy   bool
	}{
		{"⠏ Thinking… (esc to cancel, 3s)\n\n> Type your message or @path/to/file\n", true},
		{"> Type your message or @path/to/file\n", false},
		{"✻ Working… (12s · esc to interrupt)\n─────\n❯ \n─────\n", true},
		{"• Working (4s • Esc to interrupt)\n\n› Ask Codex to do anything\n", true},
		{"I said: press esc to interrupt me\n" + transcript + "❯ \n", false},
	}
	for _, c := range cases {
		if _, got := BusyAt(c.screen); got != c.busy {
			t.Errorf("BusyAt(%q) = %v, want %v", c.screen, got, c.busy)
		}
	}
}

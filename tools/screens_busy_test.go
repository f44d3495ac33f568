package tools

import "testing"

// A CLI busy on a turn is told by its status line near the bottom, as the
// pinned Claude Code and Gemini CLI draw it; the same words higher up, in
// the transcript, are not its status.
func TestBusyAt(t *testing.T) {
	pad := "\n\n\n\n\n\n\n\n\n\n\n\n"
	cases := []struct {
		launcher, screen string
		busy             bool
	}{
		{"gemini", "⠏ Thinking… (esc to cancel, 3s)\n\n> Type your message or @path/to/file\n", true},
		{"gemini", "> Type your message or @path/to/file\n", false},
		{"claude", "✻ Working… (12s · esc to interrupt)\n─────\n❯ \n─────\n", true},
		{"claude", "I said: press esc to interrupt me" + pad + "❯ \n", false},
		{"codex", "esc to interrupt\n› Ask Codex to do anything\n", false},
		{"mycli", "(esc to cancel, 1s)\n", false},
	}
	for _, c := range cases {
		if got := busyAt(c.launcher, c.screen); got != c.busy {
			t.Errorf("busyAt(%s, %q) = %v, want %v", c.launcher, c.screen, got, c.busy)
		}
	}
}

package instance

import (
	"errors"
	"testing"
)

// TestTransientTmux: which failures of tmux are tried again.
func TestTransientTmux(t *testing.T) {
	for msg, want := range map[string]bool{
		"tmux new-session: server exited unexpectedly": true,
		"lost server": true,
		"error connecting to /tmp/tmux-0/default (Connection refused)": true,
		"duplicate session: codex-x":                                   false,
	} {
		if got := transientTmux(errors.New(msg)); got != want {
			t.Errorf("transientTmux(%q) = %v, want %v", msg, got, want)
		}
	}
}

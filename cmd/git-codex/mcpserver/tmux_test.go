package mcpserver

import (
	"os"
	"os/exec"
	"testing"
)

// privateTmux points the test's agents at a tmux server of their own
// (TMUX_TMPDIR in a short fresh directory: a socket path must fit in ~100
// bytes) and kills that server when the test ends. Never the user's.
func privateTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not on PATH")
	}
	dir, err := os.MkdirTemp("", "cxa")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMUX_TMPDIR", dir)
	t.Cleanup(func() {
		kill := exec.Command("tmux", "kill-server")
		kill.Env = append(os.Environ(), "TMUX_TMPDIR="+dir)
		kill.Run()
		os.RemoveAll(dir)
	})
}

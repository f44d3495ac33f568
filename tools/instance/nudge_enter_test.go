package instance

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/tmux"
)

// TestEnterWatch: Enter is pressed again only into a program done with
// every key typed: one waiting to read (cat) is, once quiet for
// enterQuiet; one still running (as a CLI busy with the Enter it took
// is) never is, nor one whose terminal holds a line it has not read.
func TestEnterWatch(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not on PATH")
	}
	if _, _, known := tmux.PaneAsleep(os.Getpid()); !known {
		t.Skip("no process table here")
	}
	dir, err := os.MkdirTemp("", "cxe")
	if err != nil {
		t.Fatal(err)
	}
	r := tmux.Runner{Socket: filepath.Join(dir, "s"), Config: "/dev/null"}
	t.Cleanup(func() { r.KillServer(context.Background()); os.RemoveAll(dir) })
	ctx := t.Context()
	for name, cmd := range map[string]string{"waits": "exec cat", "spins": "while :; do :; done", "unread": "sleep 600"} {
		if _, err := r.NewSession(ctx, tmux.SessionSpec{Name: name, Command: []string{cmd}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.SendKeys(ctx, "unread", "a line", true); err != nil {
		t.Fatal(err)
	}
	watch := func(name string, within time.Duration) bool {
		var w enterWatch
		for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if w.dropped(ctx, r, name) {
				return true
			}
		}
		return false
	}
	if !watch("waits", 10*time.Second) {
		t.Errorf("a program waiting to read was never seen done")
	}
	if watch("spins", time.Second) {
		t.Errorf("a running program was seen done")
	}
	if watch("unread", time.Second) {
		t.Errorf("a program whose terminal holds an unread line was seen done")
	}
}

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

// TestWatchStart: an agent that exits at once is seen dead however long
// it takes to get there (here it first runs ~0.1 s of the CPU, longer than
// the 150 ms the watch once was on a loaded machine), and one that waits
// for its input is seen started, sooner than that.
func TestWatchStart(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not on PATH")
	}
	dir, err := os.MkdirTemp("", "cxw")
	if err != nil {
		t.Fatal(err)
	}
	r := tmux.Runner{Socket: filepath.Join(dir, "s"), Config: "/dev/null"}
	t.Cleanup(func() { r.KillServer(context.Background()); os.RemoveAll(dir) })
	ctx := t.Context()
	for _, c := range []struct {
		name, command string
		dead          bool
	}{
		{"quits", `sh -c 'i=0; while [ $i -lt 50000 ]; do i=$((i+1)); done; echo cannot log in; exit 3' "$(echo p)"`, true},
		{"waits", `sh -c 'exec cat' "$(echo p)"`, false},
	} {
		if _, err := r.NewSession(ctx, tmux.SessionSpec{Name: c.name, Command: []string{c.command}, KeepDeadPane: true}); err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		s, err := watchStart(ctx, r, c.name)
		took := time.Since(began)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if s.PaneDead != c.dead {
			t.Errorf("%s: dead %v after %s, want %v", c.name, s.PaneDead, took, c.dead)
		}
		if !c.dead && took >= startCheckMax {
			t.Errorf("%s: the watch took %s, its bound", c.name, took)
		}
		t.Logf("%s: %s", c.name, took)
	}
}

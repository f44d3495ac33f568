package tmux

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestDeadPaneKeepsLastWords: what a command printed just before it
// exited at once is on its dead pane's screen. tmux 3.3 closes a pane's
// terminal as soon as it reaps the pane's process, and output it had not
// read by then was lost (tmux/tmux#506): `spawn` of a launcher that
// printed why it could not start and exited said nothing. Many panes die
// together here, so that tmux is busy. Without the pane's pipe
// (deadPaneKeeper) 5 to 9 of the 40 lost their words on every run (load
// average 8-16, two CPU burners: 3 to 9 of 40, 56 of 280 in 7 runs);
// with it, 0 to 2: a residue the pipe cannot close (tmux asks the kernel
// whether unread output is pending, and output still on its way through
// the pty's buffers is not counted yet; 10 of 920 in 23 runs). The test
// is therefore a measurement, run with CODEX_TMUX_DEADPANE=1, that fails
// past 2 lost panes of 40: in the default suite, failing at any loss, it
// would fail about one run in three at load.
func TestDeadPaneKeepsLastWords(t *testing.T) {
	if os.Getenv("CODEX_TMUX_DEADPANE") != "1" {
		t.Skip("a measurement under load; run with CODEX_TMUX_DEADPANE=1")
	}
	ctx := testContext(t)
	r := newRunner(t)
	const panes = 40
	var wg sync.WaitGroup
	errs := make(chan error, panes)
	for i := range panes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("d%d", i)
			_, err := r.NewSession(ctx, SessionSpec{Name: name, KeepDeadPane: true,
				Command: []string{fmt.Sprintf("echo last words of %d; exit 3", i)}})
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var lost []string
	for i := range panes {
		name := fmt.Sprintf("d%d", i)
		want := fmt.Sprintf("last words of %d", i)
		deadline := time.Now().Add(6 * waitTimeout)
		for {
			s, err := r.describe(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			if s.PaneDead && s.PaneExitStatus >= 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("pane %s never showed as dead with a status: %+v", name, s)
			}
			time.Sleep(20 * time.Millisecond)
		}
		// the pane is dead and reaped: what it shows now is all it
		// will ever show (tmux 3.3 scrolls the screen up a line for its
		// notice: the first row is then in the scrollback)
		screen, err := r.CaptureHistory(ctx, name, 5)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(screen, want) {
			lost = append(lost, fmt.Sprintf("%s: %q", name, screen))
		}
	}
	t.Logf("%d of %d dead panes lost their last words", len(lost), panes)
	if len(lost) > 2 {
		t.Errorf("%d of %d dead panes lost their last words:\n%s", len(lost), panes, strings.Join(lost, "\n"))
	}
}

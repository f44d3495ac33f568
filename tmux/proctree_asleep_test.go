package tmux

import (
	"testing"
	"time"
)

// TestPaneAsleep: a pane whose program waits for its input is seen asleep,
// twice with the same processes; one whose program keeps running (as one
// that has not got to its exit yet does) never is; a pane whose process is
// gone has nothing asleep.
func TestPaneAsleep(t *testing.T) {
	ctx := testContext(t)
	r := newRunner(t)
	waits := mustNewSession(t, ctx, r, SessionSpec{Name: "waits", Command: []string{`sh -c 'exec cat' "$(echo x)"`}})
	spins := mustNewSession(t, ctx, r, SessionSpec{Name: "spins", Command: []string{`while :; do :; done`}})
	deadline := time.Now().Add(waitTimeout)
	prev := ""
	for {
		set, asleep, known := PaneAsleep(waits.PanePID)
		if !known {
			t.Skip("no process table here")
		}
		if asleep && set == prev {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pane waiting at cat was never seen asleep (last: %q asleep %v)", set, asleep)
		}
		prev = ""
		if asleep {
			prev = set
		}
		time.Sleep(20 * time.Millisecond)
	}
	for range 10 {
		if set, asleep, _ := PaneAsleep(spins.PanePID); asleep || set == "" {
			t.Fatalf("the spinning pane: set %q asleep %v, want it running", set, asleep)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if set, asleep, known := PaneAsleep(1 << 30); set != "" || asleep || !known {
		t.Errorf("a gone pane: set %q asleep %v known %v, want nothing asleep", set, asleep, known)
	}
}

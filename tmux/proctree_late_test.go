package tmux

import (
	"testing"
	"time"
)

// TestKillEndsWhatExitingStarts: a pane's program that starts a command
// as it is ended (as Claude Code runs git on SIGTERM) leaves nothing of
// its session running once Kill returns.
func TestKillEndsWhatExitingStarts(t *testing.T) {
	if _, ok := processTable(); !ok {
		t.Skip("no process table here")
	}
	ctx := testContext(t)
	r := newRunner(t)
	r.KillGrace = 2 * time.Second
	marker := "CODEX_LATE_TEST=" + t.Name()
	s := mustNewSession(t, ctx, r, SessionSpec{Name: "late", Env: map[string]string{"CODEX_LATE_TEST": t.Name()},
		Command: []string{`trap 'sleep 30 & exit 0' TERM HUP; while :; do sleep 0.05; done`}})
	time.Sleep(200 * time.Millisecond)
	if err := r.Kill(ctx, "late"); err != nil {
		t.Fatal(err)
	}
	for _, p := range treeOf([]int{s.PanePID}) {
		t.Errorf("left running after Kill: pid %d", p.pid)
	}
	if n := len(processesWithEnv(marker)); n > 0 {
		t.Errorf("%d process(es) with %s left running after Kill", n, marker)
		EndProcessesWithEnv(marker, time.Second)
	}
}

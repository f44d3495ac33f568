package instance

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/tmux"
	"github.com/gitcodex/git-codex/tools"
)

// nudgePane starts script (sh) in a pane of a private tmux server and
// returns the agent to nudge there, of launcher cli.
func nudgePane(t *testing.T, cli, script string) (tmux.Runner, tools.Agent) {
	t.Helper()
	sock, err := os.MkdirTemp("", "cxn")
	if err != nil {
		t.Fatal(err)
	}
	tm := tmux.Runner{Socket: filepath.Join(sock, "s"), Config: "/dev/null"}
	t.Cleanup(func() { tm.KillServer(context.Background()); os.RemoveAll(sock) })
	if _, err := tm.NewSession(t.Context(), tmux.SessionSpec{Name: "codex-a1", Command: []string{"sh", "-c", script}, Width: 120, Height: 30}); err != nil {
		t.Fatal(err)
	}
	return tm, tools.Agent{ID: "a1", TmuxSession: "codex-a1", Launcher: cli}
}

// waitScreen waits for the pane to show want.
func waitScreen(t *testing.T, tm tmux.Runner, want string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		s, _ := tm.Capture(t.Context(), "codex-a1")
		if strings.Contains(s, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pane never showed %q:\n%s", want, s)
		}
	}
}

// A program git codex knows nothing of that reads lines (the demo's
// stand-in) has taken a nudge once it read it from its terminal, not when
// the line left the cursor's row: typed while it is busy elsewhere, the
// line waits in the terminal, and send waits for it to be read.
func TestNudgeWaitsForTheLineToBeRead(t *testing.T) {
	t.Parallel()
	tm, a := nudgePane(t, "mine", `echo ready; sleep 2; read x; echo "got $x"; sleep 60`)
	waitScreen(t, tm, "ready")
	start := time.Now()
	how, err := Nudge(t.Context(), tm, a, "hello there")
	if err != nil || how != takenRead {
		t.Fatalf("nudge = %q, %v; want %q", how, err, takenRead)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("confirmed after %v, before the program read the line (it sleeps 2 s first)", d)
	}
	waitScreen(t, tm, "got hello there")
}

// A program that never reads: the line sits in its terminal, and the
// nudge says so (queued_unread), never "submitted".
func TestNudgeNeverReadIsNotSubmitted(t *testing.T) {
	t.Parallel()
	tm, a := nudgePane(t, "mine", `echo ready; sleep 60`)
	waitScreen(t, tm, "ready")
	_, err := Nudge(t.Context(), tm, a, "hello there")
	var te *tools.Error
	if !errors.As(err, &te) || te.Code != tools.NudgeNotDelivered || te.Details["seen"] != seenUnread {
		t.Fatalf("nudge = %v; want NUDGE_NOT_DELIVERED seen %s", err, seenUnread)
	}
}

// A CLI that drops the first line it is given (as Gemini CLI does with
// keys typed while it redraws after a turn): the line leaves the input,
// no echo, no turn; the nudge types it again, and confirms it by its echo.
// The stand-in draws Claude Code's input ("❯ " under a rule) and, like
// it, leaves a taken line in its transcript.
func TestNudgeTypesADroppedLineAgain(t *testing.T) {
	t.Parallel()
	script := `printf '────────\n❯ '; read x; printf '\033[1A\r\033[2K❯ '; read y; echo "(noted) $y"; printf '────────\n❯ '; sleep 60`
	tm, a := nudgePane(t, "claude", script)
	waitScreen(t, tm, "❯")
	how, err := Nudge(t.Context(), tm, a, "please look again")
	if err != nil || how != takenEcho {
		s, _ := tm.Capture(t.Context(), "codex-a1")
		t.Fatalf("nudge = %q, %v; want %q; pane:\n%s", how, err, takenEcho, s)
	}
	waitScreen(t, tm, "(noted) please look again")
}

// A CLI that echoes nothing and starts no turn: the line is not reported
// taken, however often it is typed (line_dropped).
func TestNudgeUnansweredLineIsNotSubmitted(t *testing.T) {
	t.Parallel()
	script := `printf '────────\n❯ '; while read x; do printf '\033[1A\r\033[2K❯ '; done`
	tm, a := nudgePane(t, "claude", script)
	waitScreen(t, tm, "❯")
	_, err := Nudge(t.Context(), tm, a, "anyone there")
	var te *tools.Error
	if !errors.As(err, &te) || te.Code != tools.NudgeNotDelivered || te.Details["seen"] != seenDropped {
		t.Fatalf("nudge = %v; want NUDGE_NOT_DELIVERED seen %s", err, seenDropped)
	}
}

// An input that takes an Enter following typed keys too closely for a
// newline (Gemini CLI's fast return, 30 ms): the first Enter waits
// enterAfterText after the text shows, so the line is submitted once and
// no newline is inserted. Without the wait the Enter came within the
// window in most runs.
func TestNudgeEnterIsNoFastReturn(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		tm, a := nudgePane(t, "mine", "CODEX_TEST_FAST_RETURN=1 exec "+exe)
		waitScreen(t, tm, "ready")
		if _, err := Nudge(t.Context(), tm, a, "please look again"); err != nil {
			t.Fatalf("round %d: nudge: %v", i, err)
		}
		waitScreen(t, tm, "SUBMIT please look again")
		if s, _ := tm.Capture(t.Context(), "codex-a1"); strings.Contains(s, "NEWLINE") {
			t.Fatalf("round %d: the Enter was taken for a newline:\n%s", i, s)
		}
		tm.KillServer(t.Context())
	}
}

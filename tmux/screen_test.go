package tmux

import (
	"os"
	"regexp"
	"runtime"
	"testing"
	"time"
)

// ReadScreen's rows, cursor and history size belong together: after a
// command printed 30 rows into a 20-row pane, the history holds what
// scrolled away and the cursor is on the prompt's row.
func TestReadScreen(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	r := newRunner(t)
	spec := shellSpec(t, "scr")
	spec.Height = 20
	mustNewSession(t, ctx, r, spec)

	shellRun(t, ctx, r, "scr", "seq -f row%g 1 30")
	waitForLine(t, ctx, r, "scr", regexp.MustCompile(`(?m)^row30\n`))
	waitForLine(t, ctx, r, "scr", promptIdle)
	s, err := r.ReadScreen(ctx, "scr")
	if err != nil {
		t.Fatalf("ReadScreen: %v", err)
	}
	if len(s.Rows) != 20 {
		t.Fatalf("%d rows, want 20:\n%s", len(s.Rows), s.Text())
	}
	// 1 command row + 30 output rows + the prompt = 32 rows: 12 scrolled
	if s.History != 12 {
		t.Errorf("history %d, want 12", s.History)
	}
	if above, line := s.CursorRow(); line != "gc$" || above != "row30" || s.CursorY != 19 || s.CursorX != 4 {
		t.Errorf("cursor at %d,%d on %q under %q; want 4,19 on \"gc$\" under \"row30\"", s.CursorX, s.CursorY, line, above)
	}
	if s.Rows[0] != "row12" {
		t.Errorf("first row %q, want row12", s.Rows[0])
	}
}

// A line typed into a program that reads lines waits in the pane's
// terminal until the program reads it: InputPending counts it once Enter
// completed it, and nothing once it was read.
func TestInputPending(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("TIOCINQ is read on Linux only")
	}
	t.Parallel()
	ctx := testContext(t)
	r := newRunner(t)
	spec := shellSpec(t, "inq")
	mustNewSession(t, ctx, r, spec)
	// the shell sleeps, not reading, then reads one line
	shellRun(t, ctx, r, "inq", "while [ ! -e "+spec.Env["ENV"]+".go ]; do sleep 0.05; done; read x; echo got=$x")
	waitForLine(t, ctx, r, "inq", regexp.MustCompile(`(?m)got=\$x\n`))
	// the echo shows the command typed, not read: on a busy machine the
	// shell may not have read it yet, and it waits in the queue whole
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		n, err := r.InputPending(ctx, "inq")
		if err == nil && n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the shell never read its command: pending %d, %v", n, err)
		}
	}
	if err := r.SendKeys(ctx, "inq", "hello", false); err != nil {
		t.Fatal(err)
	}
	// a partial line is not counted (canonical mode)
	waitForLine(t, ctx, r, "inq", regexp.MustCompile(`(?m)^hello$`))
	if n, err := r.InputPending(ctx, "inq"); err != nil || n != 0 {
		t.Errorf("pending before Enter = %d, %v; want 0", n, err)
	}
	if err := r.SendKeys(ctx, "inq", "", true); err != nil {
		t.Fatal(err)
	}
	if n, err := r.InputPending(ctx, "inq"); err != nil || n != len("hello\n") {
		t.Errorf("pending after Enter = %d, %v; want %d", n, err, len("hello\n"))
	}
	// let it read
	if err := os.WriteFile(spec.Env["ENV"]+".go", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitForLine(t, ctx, r, "inq", regexp.MustCompile(`(?m)^got=hello$`))
	if n, err := r.InputPending(ctx, "inq"); err != nil || n != 0 {
		t.Errorf("pending once read = %d, %v; want 0", n, err)
	}
	if _, err := r.InputPending(ctx, "nosuch"); err == nil {
		t.Error("InputPending of a missing session succeeded")
	}
}

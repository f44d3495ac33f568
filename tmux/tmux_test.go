package tmux

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitTimeout bounds every poll for screen output.
const waitTimeout = 5 * time.Second

// shortTempDir returns a fresh directory with a short path, removed at the
// end of the test. t.TempDir paths embed the test name and can push a
// socket path past the ~100-byte limit of Unix socket addresses.
func shortTempDir(t *testing.T) string {
	t.Helper()
	base := os.TempDir()
	if len(base) > 40 {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "gctmux")
	if err != nil {
		t.Fatal(err)
	}
	// Resolve symlinks (macOS /tmp) so that pwd output compares equal.
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// newRunner returns a Runner on a private server (socket path in a fresh
// directory, no user config) and makes sure that server is gone when the
// test ends. It skips the test if tmux is not installed.
func newRunner(t *testing.T) Runner {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not on PATH")
	}
	r := Runner{Socket: filepath.Join(shortTempDir(t), "s"), Config: "/dev/null"}
	t.Cleanup(func() { killServer(t, r) })
	return r
}

func killServer(t *testing.T, r Runner) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.KillServer(ctx); err != nil {
		t.Errorf("KillServer: %v", err)
	}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// shellSpec is a session running a plain POSIX shell with the prompt
// "gc$ ", wide enough that no test line wraps. The prompt is set from an
// $ENV startup file because dash overrides an inherited PS1 for root.
func shellSpec(t *testing.T, name string) SessionSpec {
	t.Helper()
	rc := filepath.Join(shortTempDir(t), "shrc")
	if err := os.WriteFile(rc, []byte("PS1='gc$ '\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return SessionSpec{
		Name:    name,
		Command: []string{"sh"},
		Env:     map[string]string{"ENV": rc},
		Width:   200,
		Height:  50,
	}
}

func mustNewSession(t *testing.T, ctx context.Context, r Runner, spec SessionSpec) Session {
	t.Helper()
	s, err := r.NewSession(ctx, spec)
	if err != nil {
		t.Fatalf("NewSession(%q): %v", spec.Name, err)
	}
	return s
}

// waitForLine polls the pane until some line matches re and returns the
// first submatch (or the whole match). Commands are written so that the
// expected line appears only in their output, never in the echoed command
// line, so a match proves the shell ran them.
func waitForLine(t *testing.T, ctx context.Context, r Runner, name string, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	var screen string
	for {
		var err error
		screen, err = r.Capture(ctx, name)
		if err != nil {
			t.Fatalf("Capture(%q): %v", name, err)
		}
		if m := re.FindStringSubmatch(screen); m != nil {
			return m[len(m)-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no line matching %q on %q after %v; screen:\n%s", re, name, waitTimeout, screen)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// promptIdle matches a screen whose last line is the idle prompt of
// shellSpec (capture-pane drops the trailing space).
var promptIdle = regexp.MustCompile(`(?:^|\n)gc\$\n$`)

// shellRun types cmd into a shellSpec session once its shell is idle at a
// prompt, and presses Enter. Keys sent earlier would be echoed by the
// terminal before the prompt is drawn, and the command's first output line
// would then start with the prompt instead of at the left margin.
func shellRun(t *testing.T, ctx context.Context, r Runner, name, cmd string) {
	t.Helper()
	waitForLine(t, ctx, r, name, promptIdle)
	if err := r.SendKeys(ctx, name, cmd, true); err != nil {
		t.Fatalf("SendKeys(%q, %q): %v", name, cmd, err)
	}
}

func TestSessionLifecycle(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	r := newRunner(t)
	dir := shortTempDir(t)
	foo := fmt.Sprintf("foo-%d-%d", os.Getpid(), time.Now().UnixNano())

	spec := shellSpec(t, "agent-1")
	spec.Dir = dir
	spec.Env["FOO"] = foo
	before := time.Now().Add(-2 * time.Second)
	s := mustNewSession(t, ctx, r, spec)
	if s.Name != "agent-1" {
		t.Errorf("Name = %q, want agent-1", s.Name)
	}
	if s.PanePID <= 0 {
		t.Errorf("PanePID = %d, want > 0", s.PanePID)
	} else if err := syscall.Kill(s.PanePID, 0); err != nil {
		t.Errorf("pane process %d not alive: %v", s.PanePID, err)
	}
	if s.Created.Before(before) || s.Created.After(time.Now().Add(2*time.Second)) {
		t.Errorf("Created = %v, want about now", s.Created)
	}
	if s.Attached {
		t.Errorf("Attached = true for a detached session")
	}

	ok, err := r.HasSession(ctx, "agent-1")
	if err != nil || !ok {
		t.Fatalf("HasSession = %v, %v; want true, nil", ok, err)
	}

	list, err := r.List(ctx)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(list) != 1 || list[0].Name != "agent-1" || list[0].PanePID != s.PanePID || !list[0].Created.Equal(s.Created) {
		t.Fatalf("List = %+v, want just %+v", list, s)
	}

	// The shell really runs what we type: $((6*7)) is expanded only in the
	// output, so the marker cannot come from the echoed command line.
	marker := fmt.Sprintf("hello-%d", time.Now().UnixNano())
	shellRun(t, ctx, r, "agent-1", "echo "+marker+"-$((6*7))-marker")
	waitForLine(t, ctx, r, "agent-1", regexp.MustCompile(`(?m)^`+marker+`-42-marker$`))

	// Env reaches the pane through -e.
	shellRun(t, ctx, r, "agent-1", `echo "foo=$FOO"`)
	if got := waitForLine(t, ctx, r, "agent-1", regexp.MustCompile(`(?m)^foo=(.+)$`)); got != foo {
		t.Errorf("FOO in pane = %q, want %q", got, foo)
	}

	// Dir is the pane's working directory.
	shellRun(t, ctx, r, "agent-1", `echo "pwd=$(pwd -P)"`)
	if got := waitForLine(t, ctx, r, "agent-1", regexp.MustCompile(`(?m)^pwd=(.+)$`)); got != dir {
		t.Errorf("pane working directory = %q, want %q", got, dir)
	}

	// Width and Height are the pane's terminal size.
	shellRun(t, ctx, r, "agent-1", `echo "size=$(stty size)"`)
	if got := waitForLine(t, ctx, r, "agent-1", regexp.MustCompile(`(?m)^size=(.+)$`)); got != "50 200" {
		t.Errorf("stty size = %q, want %q", got, "50 200")
	}

	// A second session keeps the server alive, so the repeated Kill below
	// meets a running server that lacks the session.
	mustNewSession(t, ctx, r, shellSpec(t, "agent-2"))

	if err := r.Kill(ctx, "agent-1"); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if ok, err := r.HasSession(ctx, "agent-1"); err != nil || ok {
		t.Fatalf("HasSession after Kill = %v, %v; want false, nil", ok, err)
	}
	err = r.Kill(ctx, "agent-1")
	if !errors.Is(err, ErrNoSession) {
		t.Fatalf("second Kill = %v, want ErrNoSession", err)
	}
	if errors.Is(err, ErrNoServer) {
		t.Errorf("second Kill = %v, must not match ErrNoServer while the server runs", err)
	}
	if want := `tmux: kill-session "agent-1": can't find session`; !strings.Contains(err.Error(), want) {
		t.Errorf("second Kill error %q does not contain %q", err, want)
	}
	list, err = r.List(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "agent-2" {
		t.Fatalf("List after Kill = %+v, %v; want just agent-2", list, err)
	}

	// Killing the last session stops the server; Kill still says the
	// session is gone, and matches ErrNoServer too.
	if err := r.Kill(ctx, "agent-2"); err != nil {
		t.Fatalf("Kill agent-2: %v", err)
	}
	waitNoServer(t, ctx, r)
	err = r.Kill(ctx, "agent-2")
	if !errors.Is(err, ErrNoSession) || !errors.Is(err, ErrNoServer) {
		t.Fatalf("Kill with no server = %v, want ErrNoSession and ErrNoServer", err)
	}
	if ok, err := r.HasSession(ctx, "agent-2"); err != nil || ok {
		t.Fatalf("HasSession with no server = %v, %v; want false, nil", ok, err)
	}
}

// waitNoServer waits until the server has exited (it does so on its own
// once its last session is gone, but not synchronously).
func waitNoServer(t *testing.T, ctx context.Context, r Runner) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		_, err := r.run(ctx, "list-sessions", "", false, "list-sessions")
		if errors.Is(err, ErrNoServer) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server still running after %v (last error %v)", waitTimeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestListNoServer(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	r := newRunner(t)
	list, err := r.List(ctx)
	if err != nil {
		t.Fatalf("List with no server: %v", err)
	}
	if list == nil || len(list) != 0 {
		t.Fatalf("List with no server = %#v, want empty non-nil slice", list)
	}
	if ok, err := r.HasSession(ctx, "x"); err != nil || ok {
		t.Fatalf("HasSession with no server = %v, %v; want false, nil", ok, err)
	}
	if err := r.KillServer(ctx); err != nil {
		t.Fatalf("KillServer with no server: %v", err)
	}
	if _, err := r.Capture(ctx, "x"); !errors.Is(err, ErrNoSession) {
		t.Fatalf("Capture with no server = %v, want ErrNoSession", err)
	}
	if err := r.SendKeys(ctx, "x", "hi", true); !errors.Is(err, ErrNoSession) {
		t.Fatalf("SendKeys with no server = %v, want ErrNoSession", err)
	}
}

func TestDuplicateSession(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	r := newRunner(t)
	first := mustNewSession(t, ctx, r, shellSpec(t, "dup"))
	_, err := r.NewSession(ctx, shellSpec(t, "dup"))
	if !errors.Is(err, ErrDuplicateSession) {
		t.Fatalf("second NewSession = %v, want ErrDuplicateSession", err)
	}
	if want := `tmux: new-session "dup": duplicate session: dup`; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}
	list, err := r.List(ctx)
	if err != nil || len(list) != 1 || list[0].PanePID != first.PanePID {
		t.Fatalf("List = %+v, %v; want only the first session", list, err)
	}
}

func TestInvalidNames(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	r := newRunner(t)
	for _, name := range []string{"", "a.b", "a:b", ".", "a\nb", "a\tb", "a\x00b", "bad\xffutf8"} {
		spec := shellSpec(t, name)
		if _, err := r.NewSession(ctx, spec); !errors.Is(err, ErrInvalidName) {
			t.Errorf("NewSession(%q) = %v, want ErrInvalidName", name, err)
		}
		if _, err := r.HasSession(ctx, name); !errors.Is(err, ErrInvalidName) {
			t.Errorf("HasSession(%q) = %v, want ErrInvalidName", name, err)
		}
		if err := r.Kill(ctx, name); !errors.Is(err, ErrInvalidName) {
			t.Errorf("Kill(%q) = %v, want ErrInvalidName", name, err)
		}
		if err := r.SendKeys(ctx, name, "x", true); !errors.Is(err, ErrInvalidName) {
			t.Errorf("SendKeys(%q) = %v, want ErrInvalidName", name, err)
		}
		if _, err := r.Capture(ctx, name); !errors.Is(err, ErrInvalidName) {
			t.Errorf("Capture(%q) = %v, want ErrInvalidName", name, err)
		}
	}
	// Nothing reached tmux: no server was started.
	if list, err := r.List(ctx); err != nil || len(list) != 0 {
		t.Fatalf("List = %+v, %v; want no sessions", list, err)
	}
	for _, name := range []string{"agent-1", "a b", "a|b", "a#b", "=x", "-x", "ünï"} {
		if err := CheckName(name); err != nil {
			t.Errorf("CheckName(%q) = %v, want nil", name, err)
		}
	}
}

// TestExactNames checks that names are matched exactly, never by prefix,
// and that characters tmux treats specially elsewhere round-trip.
func TestExactNames(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	r := newRunner(t)
	dir := filepath.Join(shortTempDir(t), "d#{pid}")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	names := []string{"agent-10", "a#{pid} |x", "-dash"}
	for _, name := range names {
		spec := shellSpec(t, name)
		spec.Dir = dir
		if s := mustNewSession(t, ctx, r, spec); s.Name != name {
			t.Errorf("NewSession(%q).Name = %q", name, s.Name)
		}
	}
	list, err := r.List(ctx)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	var got []string
	for _, s := range list {
		got = append(got, s.Name)
	}
	slices.Sort(got)
	want := slices.Clone(names)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("List names = %q, want %q", got, want)
	}

	shellRun(t, ctx, r, "a#{pid} |x", `echo "pwd=$(pwd -P)"`)
	if got := waitForLine(t, ctx, r, "a#{pid} |x", regexp.MustCompile(`(?m)^pwd=(.+)$`)); got != dir {
		t.Errorf("pane working directory = %q, want %q", got, dir)
	}

	if ok, err := r.HasSession(ctx, "agent-1"); err != nil || ok {
		t.Errorf("HasSession(agent-1) = %v, %v; a prefix of agent-10 must not match", ok, err)
	}
	if err := r.Kill(ctx, "agent-1"); !errors.Is(err, ErrNoSession) {
		t.Errorf("Kill(agent-1) = %v, want ErrNoSession", err)
	}
	if _, err := r.Capture(ctx, "agent-1"); !errors.Is(err, ErrNoSession) {
		t.Errorf("Capture(agent-1) = %v, want ErrNoSession", err)
	}
	if ok, err := r.HasSession(ctx, "agent-10"); err != nil || !ok {
		t.Errorf("HasSession(agent-10) = %v, %v; want true", ok, err)
	}
}

func TestSendKeysLiteral(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	r := newRunner(t)
	mustNewSession(t, ctx, r, shellSpec(t, "lit"))

	// Key names are typed as text, not pressed.
	shellRun(t, ctx, r, "lit", `echo "lit=C-c Enter $((1+1))"`)
	if got := waitForLine(t, ctx, r, "lit", regexp.MustCompile(`(?m)^lit=(.+)$`)); got != "C-c Enter 2" {
		t.Errorf("output = %q, want %q", got, "C-c Enter 2")
	}

	// Text starting with '-' is text, and the line can be built up in
	// pieces before a bare Enter submits it.
	waitForLine(t, ctx, r, "lit", promptIdle)
	if err := r.SendKeys(ctx, "lit", "-nosuchcmd", false); err != nil {
		t.Fatalf("SendKeys(-nosuchcmd): %v", err)
	}
	if err := r.SendKeys(ctx, "lit", "-x", false); err != nil {
		t.Fatalf("SendKeys(-x): %v", err)
	}
	if err := r.SendKeys(ctx, "lit", "", true); err != nil {
		t.Fatalf("SendKeys(Enter): %v", err)
	}
	waitForLine(t, ctx, r, "lit", regexp.MustCompile(`(?m)-nosuchcmd-x: .*not found`))
}

func TestCaptureHistory(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	r := newRunner(t)
	spec := shellSpec(t, "hist")
	spec.Height = 20
	mustNewSession(t, ctx, r, spec)

	shellRun(t, ctx, r, "hist", "seq -f row%g 1 300")
	waitForLine(t, ctx, r, "hist", regexp.MustCompile(`(?m)^row300$`))

	visible, err := r.Capture(ctx, "hist")
	if err != nil {
		t.Fatalf("Capture: %v", err)
	}
	if lines := strings.Split(strings.TrimSuffix(visible, "\n"), "\n"); len(lines) > 20 {
		t.Errorf("visible capture has %d lines, want at most 20", len(lines))
	}
	if strings.Contains(visible, "\nrow1\n") {
		t.Errorf("visible capture contains scrolled-away row1:\n%s", visible)
	}
	if !strings.HasSuffix(visible, "\n") || strings.HasSuffix(visible, "\n\n") {
		t.Errorf("capture should end in exactly one newline: %q", visible[max(0, len(visible)-20):])
	}

	all, err := r.CaptureHistory(ctx, "hist", 1000)
	if err != nil {
		t.Fatalf("CaptureHistory: %v", err)
	}
	for _, want := range []string{"\nrow1\n", "\nrow150\n", "\nrow300\n"} {
		if !strings.Contains(all, want) {
			t.Errorf("history capture lacks %q", want)
		}
	}
	some, err := r.CaptureHistory(ctx, "hist", 50)
	if err != nil {
		t.Fatalf("CaptureHistory(50): %v", err)
	}
	if strings.Contains(some, "\nrow1\n") || !strings.Contains(some, "\nrow300\n") {
		t.Errorf("CaptureHistory(50) should hold the last rows only")
	}
	if _, err := r.CaptureHistory(ctx, "hist", -1); err == nil {
		t.Errorf("CaptureHistory(-1) succeeded, want error")
	}
}

// TestSocketName covers Socket as a name (tmux -L) under TMUX_TMPDIR, the
// form a per-repo server would use.
func TestSocketName(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not on PATH")
	}
	ctx := testContext(t)
	tmp := shortTempDir(t)
	t.Setenv("TMUX_TMPDIR", tmp)
	socket := strings.Trim(regexp.MustCompile(`[^A-Za-z0-9_-]+`).ReplaceAllString(t.Name(), "-"), "-")
	r := Runner{Socket: fmt.Sprintf("%s-%d", socket, os.Getpid()), Config: "/dev/null"}
	t.Cleanup(func() { killServer(t, r) })

	mustNewSession(t, ctx, r, shellSpec(t, "named"))
	path := filepath.Join(tmp, fmt.Sprintf("tmux-%d", os.Getuid()), r.Socket)
	if fi, err := os.Stat(path); err != nil || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("socket %s: %v (mode %v), want a socket", path, err, fi)
	}
	if list, err := r.List(ctx); err != nil || len(list) != 1 || list[0].Name != "named" {
		t.Fatalf("List = %+v, %v; want the named session", list, err)
	}
	if err := r.KillServer(ctx); err != nil {
		t.Fatalf("KillServer: %v", err)
	}
	if list, err := r.List(ctx); err != nil || len(list) != 0 {
		t.Fatalf("List after KillServer = %+v, %v; want empty", list, err)
	}
}

func TestNewSessionChecksInput(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	r := newRunner(t)
	file := filepath.Join(shortTempDir(t), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]SessionSpec{
		"missing dir":  {Name: "a", Dir: filepath.Join(file, "nope")},
		"dir is file":  {Name: "a", Dir: file},
		"bad env name": {Name: "a", Env: map[string]string{"A=B": "c"}},
		"empty env":    {Name: "a", Env: map[string]string{"": "c"}},
		"negative":     {Name: "a", Width: -1},
	}
	for what, spec := range cases {
		_, err := r.NewSession(ctx, spec)
		if err == nil {
			t.Errorf("%s: NewSession succeeded, want error", what)
		} else if !strings.HasPrefix(err.Error(), `tmux: new-session "a": `) {
			t.Errorf("%s: error %q lacks the tmux: new-session prefix", what, err)
		}
	}
	if list, err := r.List(ctx); err != nil || len(list) != 0 {
		t.Fatalf("List = %+v, %v; want no sessions after rejected specs", list, err)
	}
}

func TestCommandArgv(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	r := newRunner(t)
	out := filepath.Join(shortTempDir(t), "out")
	// Several elements are run directly: the '$HOME' stays unexpanded
	// because no shell sees it.
	spec := SessionSpec{Name: "argv", Command: []string{"sh", "-c", `printf '%s' "$1" > "$2"; sleep 30`, "sh", "$HOME", out}}
	mustNewSession(t, ctx, r, spec)
	deadline := time.Now().Add(waitTimeout)
	for {
		b, err := os.ReadFile(out)
		if err == nil && len(b) > 0 {
			if string(b) != "$HOME" {
				t.Fatalf("argument = %q, want literal $HOME", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("command did not run within %v: %v", waitTimeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	r := newRunner(t)

	// A missing binary is an error, never "no server" and so never an
	// empty list.
	bad := Runner{Binary: filepath.Join(shortTempDir(t), "no-tmux"), Socket: r.Socket}
	if list, err := bad.List(ctx); err == nil || errors.Is(err, ErrNoServer) {
		t.Fatalf("List with missing binary = %+v, %v; want a plain error", list, err)
	} else if !strings.HasPrefix(err.Error(), "tmux: list-sessions: ") {
		t.Errorf("error %q lacks the tmux: list-sessions prefix", err)
	}
	if err := bad.KillServer(ctx); err == nil {
		t.Errorf("KillServer with missing binary succeeded")
	}

	// A cancelled context is reported as such.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.NewSession(cancelled, shellSpec(t, "c")); !errors.Is(err, context.Canceled) {
		t.Fatalf("NewSession with cancelled context = %v, want context.Canceled", err)
	}
}

// TestKeepDeadPane: a command that exits at once leaves its session,
// reported dead with its exit status, instead of vanishing; a live one is
// reported alive.
func TestKeepDeadPane(t *testing.T) {
	ctx := context.Background()
	r := newRunner(t)
	if _, err := r.NewSession(ctx, SessionSpec{Name: "dies", Command: []string{"exit 3"}, KeepDeadPane: true}); err != nil {
		t.Fatal(err)
	}
	dir := shortTempDir(t)
	if _, err := r.NewSession(ctx, SessionSpec{Name: "lives", Dir: dir, Env: map[string]string{"FOO": "bar"},
		Command: []string{`echo "$FOO in $(pwd)"; sleep 60`}, KeepDeadPane: true}); err != nil {
		t.Fatal(err)
	}
	waitForLine(t, ctx, r, "lives", regexp.MustCompile("(?m)^bar in "+regexp.QuoteMeta(dir)+"$"))
	// tmux sees the pane's terminal close and collects its status as two
	// events (Session.PaneExitStatus); under make test's load (load
	// average past 30 on two cores) the second came more than 5 s after
	// the first, so the status is waited for longer than the death. What
	// the product reads meanwhile (-1) is what parseSession says.
	deadline := time.Now().Add(6 * waitTimeout)
	for {
		sessions, err := r.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]Session{}
		for _, s := range sessions {
			got[s.Name] = s
		}
		if d := got["dies"]; d.PaneDead && d.PaneExitStatus >= 0 {
			if d.PaneExitStatus != 3 {
				t.Errorf("dead pane's status = %d, want 3", d.PaneExitStatus)
			}
			if got["lives"].PaneDead {
				t.Errorf("the live session is reported dead")
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dead pane never showed as dead: %+v", sessions)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestParseDeadPaneStatus: a dead pane whose process tmux has not reaped
// yet reports status -1, not 0 (which is an exit status of its own); a
// live pane's empty status is 0 and not looked at.
func TestParseDeadPaneStatus(t *testing.T) {
	for line, want := range map[string]Session{
		"1700000000|0|42|1||s":  {PanePID: 42, PaneDead: true, PaneExitStatus: -1},
		"1700000000|0|42|1|3|s": {PanePID: 42, PaneDead: true, PaneExitStatus: 3},
		"1700000000|0|42|1|0|s": {PanePID: 42, PaneDead: true, PaneExitStatus: 0},
		"1700000000|0|42|0||s":  {PanePID: 42},
	} {
		got, err := parseSession(line)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if got.PaneDead != want.PaneDead || got.PaneExitStatus != want.PaneExitStatus || got.PanePID != want.PanePID {
			t.Errorf("%q: dead %v status %d, want dead %v status %d", line, got.PaneDead, got.PaneExitStatus, want.PaneDead, want.PaneExitStatus)
		}
	}
}

// TestSemicolonsArriveWhole is issue 29 item 8: tmux reads an argument
// ending in ';' as a command separator, so `send` of "ls;" typed "ls", ";"
// typed nothing, and the text left on the agent's input line was glued to
// the next nudge. Text sent to a pane arrives exactly; so do a command's
// arguments and environment values that end in ';'.
func TestSemicolonsArriveWhole(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	r := newRunner(t)
	mustNewSession(t, ctx, r, shellSpec(t, "semi"))
	waitForLine(t, ctx, r, "semi", promptIdle)
	for _, text := range []string{"echo a;", ";", `b\;`, "c;;", `d\`, "e ; f;"} {
		if err := r.SendKeys(ctx, "semi", text, false); err != nil {
			t.Fatalf("SendKeys(%q): %v", text, err)
		}
		deadline := time.Now().Add(waitTimeout)
		for {
			line, err := r.CursorLine(ctx, "semi")
			if err != nil {
				t.Fatal(err)
			}
			if line == "gc$ "+text {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("input line %q after typing %q", line, text)
			}
			time.Sleep(20 * time.Millisecond)
		}
		// clear the line (Ctrl-U is not text: sent as a key)
		if _, err := r.run(ctx, "send-keys", "semi", true, "send-keys", "-t", paneTarget("semi"), "C-u"); err != nil {
			t.Fatal(err)
		}
		waitForLine(t, ctx, r, "semi", promptIdle)
	}

	// a command's arguments and its environment
	dir := shortTempDir(t)
	out := filepath.Join(dir, "out")
	spec := SessionSpec{
		Name:    "semi2",
		Dir:     dir,
		Command: []string{"sh", "-c", `printf '%s|%s\n' "$0" "$V" > ` + out + `; sleep 60`, "arg;"},
		Env:     map[string]string{"V": "val;"},
	}
	mustNewSession(t, ctx, r, spec)
	deadline := time.Now().Add(waitTimeout)
	for {
		b, _ := os.ReadFile(out)
		if string(b) == "arg;|val;\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command saw %q, want %q", b, "arg;|val;\n")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

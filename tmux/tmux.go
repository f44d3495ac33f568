// Package tmux runs the tmux binary on git codex's behalf: it creates the
// detached sessions agents live in, types into them, reads their screens,
// lists and kills them.
//
// It is a thin wrapper over the real tmux client (3.2 or later) rather than a
// reimplementation of its protocol, so what git codex sees is exactly what a
// person running tmux by hand would see. Every method takes a context and
// runs one or two short tmux client commands; nothing is cached, so the
// tmux server stays the only owner of session state.
//
// Sessions are always addressed by exact name ("=name"): tmux's default
// target lookup also matches prefixes and patterns, which would let a
// command aimed at "work-1" hit "work-12". Failures wrap tmux's own stderr
// and, where the cause is known, one of the sentinel errors below, so a
// caller that created a session inside a git transaction can kill it again
// on rollback and treat errors.Is(err, ErrNoSession) as "already gone".
package tmux

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Sentinel errors, matched with errors.Is. tmux reports these conditions
// only as stderr text, so the package translates them in one place
// (classify) and callers never parse tmux's wording.
var (
	// ErrNoSession means the named session does not exist. A command that
	// names a session on a server that is not running matches both
	// ErrNoSession and ErrNoServer: the session is gone either way, which is
	// what makes Kill safe to repeat.
	ErrNoSession = errors.New("no such session")
	// ErrNoServer means no tmux server is listening on the runner's socket.
	ErrNoServer = errors.New("no server running")
	// ErrDuplicateSession means NewSession was asked for a name that is
	// already taken; the existing session is left untouched.
	ErrDuplicateSession = errors.New("duplicate session")
	// ErrInvalidName means a session name was rejected before tmux ran,
	// because tmux would refuse, rewrite or misparse it.
	ErrInvalidName = errors.New("invalid session name")
	// ErrNotSupported means this system cannot answer the question (the
	// input queue of a pane's terminal is read on Linux only).
	ErrNotSupported = errors.New("not supported on this system")
)

// Runner runs tmux commands against one tmux server. The zero value talks
// to the user's default server with the "tmux" binary found on PATH; tests
// and isolated setups set Socket so that they get a private server.
type Runner struct {
	// Socket selects the server. A value containing '/' is a socket path
	// (tmux -S); any other non-empty value is a socket name under
	// $TMUX_TMPDIR (tmux -L). Empty means tmux's default server.
	Socket string
	// Binary is the tmux executable, as a path or a name looked up on PATH.
	// Empty means "tmux".
	Binary string
	// Config, if set, is the configuration file a newly started server
	// reads instead of ~/.tmux.conf (tmux -f). "/dev/null" gives a server
	// that no user configuration can change, which is what tests want.
	Config string
	// KillGrace is how long Kill gives a session's processes to exit
	// after SIGTERM before it sends SIGKILL; zero means DefaultKillGrace.
	KillGrace time.Duration
}

// SessionSpec describes a session for NewSession.
type SessionSpec struct {
	// Name is the session name; see CheckName for what is allowed.
	Name string
	// Dir is the working directory of the session's first pane. It must be
	// an existing directory (tmux itself would silently fall back to
	// another one). Empty means the caller's working directory.
	Dir string
	// Command is what the first pane runs. Following tmux, a single element
	// is a shell command line run by the default shell with -c, while two or
	// more elements are an argv executed directly, without a shell. Empty
	// means the default shell.
	Command []string
	// Env is added to the environment of the session, on top of the
	// server's global environment. It is given to tmux on its standard
	// input, never on a command line (environ.go), so it may hold secrets.
	Env map[string]string
	// Width and Height are the window size in cells; zero leaves tmux's
	// default (80x24 for a detached session).
	Width, Height int
	// KeepDeadPane keeps the session when its command exits (tmux's
	// remain-on-exit, set for this session only), so that a program that
	// died can be seen as dead, with its exit status and last output,
	// rather than vanish with its session.
	KeepDeadPane bool
}

// Session is what tmux reports about one session.
type Session struct {
	// Name is the session name.
	Name string
	// Created is when tmux created the session, to the second.
	Created time.Time
	// Attached reports whether at least one client is attached: a person is
	// watching, so an automated kill deserves more care.
	Attached bool
	// PanePID is the process id of the active pane's process (the agent or
	// its shell), for liveness checks and signals.
	PanePID int
	// PaneDead reports that the active pane's process has exited (seen
	// only in sessions made with KeepDeadPane); PaneExitStatus is then its
	// exit status, or -1 until tmux has collected it: tmux sees the pane's
	// terminal close and reaps its process as two events, under load more
	// than a second apart.
	PaneDead       bool
	PaneExitStatus int
}

// deadPaneKeeper is the pipe-pane command of a session made with
// KeepDeadPane: it throws the pane's output away, and is there for what
// it makes tmux do. tmux 3.3 closes a pane's terminal as soon as it reaps
// the pane's process, and output it had not read by then is lost
// (tmux/tmux#506): a launcher that printed why it could not start and
// exited at once left an empty dead pane, 1 pane in 5 when 40 die
// together at load (TestDeadPaneKeepsLastWords). While a pane has a pipe,
// tmux keeps its terminal open until it has read all the kernel says is
// pending (window_pane_destroy_ready in tmux 3.3a's window.c), so the
// screen has the last words; 1 pane in 100 still loses them there, whose
// output the kernel had not yet passed on when tmux asked. The pipe is set on the placeholder process, before the
// pane's command starts (respawn-pane keeps it), and its cat ends when
// the pane is killed. Nothing is written anywhere: the pane's output may
// hold anything an agent printed.
const deadPaneKeeper = "exec cat >/dev/null"

// sessionFormat is the -F format that NewSession and List both parse with
// parseSession. Fields are separated by '|', not a tab: a tmux server
// started without a UTF-8 locale prints a tab in formats as '_'. The name
// comes last, so that it may contain '|', spaces and the like without any
// quoting; the other fields are numbers.
const sessionFormat = "#{session_created}|#{session_attached}|#{pane_pid}|#{pane_dead}|#{pane_dead_status}|#{session_name}"

// CheckName reports whether name can be used as a session name, returning
// an error that matches ErrInvalidName if not. tmux forbids '.' and ':'
// (they separate window and pane in a target) and rewrites control
// characters and invalid UTF-8, so such names would not round-trip; an
// empty name would let tmux pick one. Callers that record a session name in
// git before creating the session should check it first.
func CheckName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("session name is empty: %w", ErrInvalidName)
	case strings.ContainsAny(name, ".:"):
		return fmt.Errorf("session name %q contains '.' or ':', which tmux forbids: %w", name, ErrInvalidName)
	case !utf8.ValidString(name):
		return fmt.Errorf("session name %q is not valid UTF-8: %w", name, ErrInvalidName)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return fmt.Errorf("session name %q contains a control character: %w", name, ErrInvalidName)
	}
	return nil
}

// NewSession creates a detached session as described by spec and returns
// what tmux reports about it. If the name is taken the error matches
// ErrDuplicateSession. If ctx is cancelled while tmux runs, the session may
// or may not exist; a caller rolling back should Kill it and ignore
// ErrNoSession.
func (r Runner) NewSession(ctx context.Context, spec SessionSpec) (Session, error) {
	const op = "new-session"
	if err := CheckName(spec.Name); err != nil {
		return Session{}, opError(op, spec.Name, err)
	}
	if spec.Width < 0 || spec.Height < 0 {
		return Session{}, opError(op, spec.Name, fmt.Errorf("negative size %dx%d", spec.Width, spec.Height))
	}
	// -s and -c are expanded as formats by tmux, so '#' is escaped to keep
	// names and directories literal.
	args := []string{op, "-d", "-P", "-F", sessionFormat, "-s", literal(escapeFormat(spec.Name))}
	if spec.Dir != "" {
		if err := checkDir(spec.Dir); err != nil {
			return Session{}, opError(op, spec.Name, err)
		}
		args = append(args, "-c", literal(escapeFormat(spec.Dir)))
	}
	if spec.Width > 0 {
		args = append(args, "-x", strconv.Itoa(spec.Width))
	}
	if spec.Height > 0 {
		args = append(args, "-y", strconv.Itoa(spec.Height))
	}
	script, err := envScript(spec.Name, spec.Env)
	if err != nil {
		return Session{}, opError(op, spec.Name, err)
	}
	// The pane's command is started (respawned) only once its session is
	// set up: told to remain when its process exits (a command that exits
	// at once would otherwise take its session with it before any option
	// could be set) and given its environment (read from stdin, never
	// argv: environ.go). Until then a command runs as a placeholder; no
	// command (the default shell) starts twice, the first time without
	// either.
	respawn := spec.KeepDeadPane || script != ""
	command := spec.Command
	if respawn && len(command) > 0 {
		command = []string{"sleep", "2147483647"}
	}
	if len(command) > 0 {
		// "--" keeps a command starting with '-' from being read as a flag.
		args = append(args, "--")
		args = append(args, literals(command)...)
	}
	if spec.KeepDeadPane {
		args = append(args, ";", "set-option", "-w", "-t", paneTarget(spec.Name), "remain-on-exit", "on",
			";", "pipe-pane", "-t", paneTarget(spec.Name), deadPaneKeeper)
	}
	if script != "" {
		args = append(args, ";", "source-file", "-")
	}
	if respawn {
		args = append(args, ";", "respawn-pane", "-k", "-t", paneTarget(spec.Name))
		if spec.Dir != "" {
			args = append(args, "-c", literal(escapeFormat(spec.Dir)))
		}
		if len(spec.Command) > 0 {
			args = append(args, "--")
			args = append(args, literals(spec.Command)...)
		}
	}
	var stdin io.Reader
	if script != "" {
		stdin = strings.NewReader(script)
	}
	out, err := r.runIn(ctx, stdin, op, spec.Name, true, args...)
	if err != nil {
		return Session{}, err
	}
	var s Session
	if respawn {
		// the respawned pane's process; -P's line, printed through a
		// chain of commands, comes with its tabs made into '_'
		s, err = r.describe(ctx, spec.Name)
	} else {
		s, err = parseSession(strings.TrimSuffix(out, "\n"))
	}
	if err != nil {
		// The session exists but we cannot describe it; remove it rather than
		// hand back a half-known session.
		_ = r.Kill(context.WithoutCancel(ctx), spec.Name)
		return Session{}, opError(op, spec.Name, err)
	}
	return s, nil
}

// describe reports one session as List does.
func (r Runner) describe(ctx context.Context, name string) (Session, error) {
	sessions, err := r.List(ctx)
	if err != nil {
		return Session{}, err
	}
	for _, s := range sessions {
		if s.Name == name {
			return s, nil
		}
	}
	return Session{}, opError("list-sessions", name, ErrNoSession)
}

// HasSession reports whether a session with exactly this name exists. No
// running server means no session: false and a nil error.
func (r Runner) HasSession(ctx context.Context, name string) (bool, error) {
	const op = "has-session"
	if err := CheckName(name); err != nil {
		return false, opError(op, name, err)
	}
	_, err := r.run(ctx, op, name, true, op, "-t", sessionTarget(name))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNoSession):
		return false, nil
	}
	return false, err
}

// List returns every session of the server, in tmux's order (by name). No
// running server is not an error: the list is simply empty (and non-nil,
// so it encodes as [] in JSON).
func (r Runner) List(ctx context.Context) ([]Session, error) {
	const op = "list-sessions"
	out, err := r.run(ctx, op, "", false, op, "-F", sessionFormat)
	if errors.Is(err, ErrNoServer) {
		return []Session{}, nil
	}
	if err != nil {
		return nil, err
	}
	sessions := []Session{}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		s, err := parseSession(line)
		if err != nil {
			return nil, opError(op, "", err)
		}
		sessions = append(sessions, s)
	}
	return sessions, nil
}

// SendKeys types keys into the session's active pane as literal text (tmux
// send-keys -l), so words such as "Enter" or "C-c" are typed, not pressed.
// If enter is true an Enter key press follows, sent as a separate key so it
// submits the line whatever the text contains. Keys reach the pane's
// terminal whether or not its program is ready: typed before a shell has
// drawn its prompt, they are echoed first and the program's output then
// starts after the prompt, so callers that parse output wait for the
// prompt (with Capture) before typing.
func (r Runner) SendKeys(ctx context.Context, name, keys string, enter bool) error {
	const op = "send-keys"
	if err := CheckName(name); err != nil {
		return opError(op, name, err)
	}
	if keys != "" {
		if _, err := r.run(ctx, op, name, true, op, "-t", paneTarget(name), "-l", "--", literal(keys)); err != nil {
			return err
		}
	}
	if enter {
		if _, err := r.run(ctx, op, name, true, op, "-t", paneTarget(name), "Enter"); err != nil {
			return err
		}
	}
	return nil
}

// Capture returns the visible contents of the session's active pane as
// plain text, one line per row, with trailing blank rows removed.
func (r Runner) Capture(ctx context.Context, name string) (string, error) {
	return r.CaptureHistory(ctx, name, 0)
}

// CaptureHistory is Capture with up to lines rows of scrollback above the
// visible screen included, for reading output that has scrolled away.
func (r Runner) CaptureHistory(ctx context.Context, name string, lines int) (string, error) {
	const op = "capture-pane"
	if err := CheckName(name); err != nil {
		return "", opError(op, name, err)
	}
	if lines < 0 {
		return "", opError(op, name, fmt.Errorf("negative history lines %d", lines))
	}
	args := []string{op, "-p", "-t", paneTarget(name)}
	if lines > 0 {
		args = append(args, "-S", strconv.Itoa(-lines))
	}
	out, err := r.run(ctx, op, name, true, args...)
	if err != nil {
		return "", err
	}
	out = strings.TrimRight(out, "\n")
	if out == "" {
		return "", nil
	}
	return out + "\n", nil
}

// CursorLine returns the line of the session's active pane that the
// cursor is on: where a program reads what is typed. A nudge has left the
// input line once its text is no longer there.
func (r Runner) CursorLine(ctx context.Context, name string) (string, error) {
	const op = "capture-pane"
	if err := CheckName(name); err != nil {
		return "", opError(op, name, err)
	}
	y, err := r.run(ctx, "display-message", name, true, "display-message", "-p", "-t", paneTarget(name), "#{cursor_y}")
	if err != nil {
		return "", err
	}
	row := strings.TrimSpace(y)
	out, err := r.run(ctx, op, name, true, op, "-p", "-t", paneTarget(name), "-S", row, "-E", row)
	if err != nil {
		return "", err
	}
	return strings.TrimRight(out, "\n "), nil
}

// CursorLines returns the line of the session's pane the cursor is on and
// the line above it ("" when the cursor is on the first): enough to tell
// an input line drawn inside a box from text that merely looks like one.
func (r Runner) CursorLines(ctx context.Context, name string) (above, line string, err error) {
	const op = "capture-pane"
	if err := CheckName(name); err != nil {
		return "", "", opError(op, name, err)
	}
	y, err := r.run(ctx, "display-message", name, true, "display-message", "-p", "-t", paneTarget(name), "#{cursor_y}")
	if err != nil {
		return "", "", err
	}
	row, err := strconv.Atoi(strings.TrimSpace(y))
	if err != nil {
		return "", "", fmt.Errorf("tmux cursor_y %q: %w", strings.TrimSpace(y), err)
	}
	from := max(row-1, 0)
	out, err := r.run(ctx, op, name, true, op, "-p", "-t", paneTarget(name), "-S", strconv.Itoa(from), "-E", strconv.Itoa(row))
	if err != nil {
		return "", "", err
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if row > 0 && len(lines) == 2 {
		above = strings.TrimRight(lines[0], " ")
	}
	return above, strings.TrimRight(lines[len(lines)-1], " "), nil
}

// Kill kills the session and every process in it. Killing a session that
// does not exist (or whose server is not running) returns an error that
// matches ErrNoSession, so rollbacks and repeated cleanups can ignore it.
//
// tmux's kill-session closes the panes' terminals, which sends SIGHUP, and
// a program may catch that and run on (Gemini CLI does, with its node
// children). So Kill first notes the panes' process trees (each pane's
// process leads a session of its own; see treeOf), kills the session,
// sends SIGTERM to what is still running of them, and after KillGrace
// sends SIGKILL to what is left: nothing of the session runs when it
// returns.
func (r Runner) Kill(ctx context.Context, name string) error {
	const op = "kill-session"
	if err := CheckName(name); err != nil {
		return opError(op, name, err)
	}
	roots := r.panePIDs(ctx, name)
	procs := treeOf(roots)
	_, err := r.run(ctx, op, name, true, op, "-t", sessionTarget(name))
	if len(roots) == 0 {
		return err
	}
	// what the panes started after the first look
	for _, p := range treeOf(roots) {
		if !slices.Contains(procs, p) {
			procs = append(procs, p)
		}
	}
	grace := r.KillGrace
	if grace <= 0 {
		grace = DefaultKillGrace
	}
	left := endProcs(procs, grace)
	left = append(left, endLateProcs(roots, procs, grace)...)
	if len(left) > 0 && err == nil {
		err = opError(op, name, fmt.Errorf("%d process(es) of the session still run after SIGKILL (pid %d)", len(left), left[0].pid))
	}
	return err
}

// panePIDs are the process ids of a session's panes (in all its windows),
// or none if tmux cannot say.
func (r Runner) panePIDs(ctx context.Context, name string) []int {
	// list-panes -s -t =name (no ':') matched a session whose name only
	// starts with name (tmux 3.3a); the pane form matches exactly, and
	// each line names its session to be sure
	out, err := r.run(ctx, "list-panes", name, true, "list-panes", "-s", "-t", paneTarget(name), "-F", "#{pane_pid}|#{session_name}")
	if err != nil {
		return nil
	}
	var pids []int
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		f, session, _ := strings.Cut(line, "|")
		if pid, err := strconv.Atoi(f); err == nil && pid > 1 && session == name {
			pids = append(pids, pid)
		}
	}
	return pids
}

// KillServer kills the server and with it every session. No running server
// is success: the goal state already holds.
func (r Runner) KillServer(ctx context.Context) error {
	const op = "kill-server"
	_, err := r.run(ctx, op, "", false, op)
	if errors.Is(err, ErrNoServer) {
		return nil
	}
	return err
}

// Args are the arguments that select the runner's server (-f, -S or -L),
// for a tmux client started by someone else (an attach).
func (r Runner) Args() []string {
	var argv []string
	if r.Config != "" {
		argv = append(argv, "-f", r.Config)
	}
	switch {
	case strings.Contains(r.Socket, "/"):
		argv = append(argv, "-S", r.Socket)
	case r.Socket != "":
		argv = append(argv, "-L", r.Socket)
	}
	return argv
}

// run runs one tmux client command and returns its stdout. op and name only
// label errors; targetsSession says the command names a session, so that a
// missing server also counts as a missing session.
func (r Runner) run(ctx context.Context, op, name string, targetsSession bool, args ...string) (string, error) {
	return r.runIn(ctx, nil, op, name, targetsSession, args...)
}

// runIn is run with stdin as the client's standard input (nil: none), for
// what a command reads there (source-file -).
func (r Runner) runIn(ctx context.Context, stdin io.Reader, op, name string, targetsSession bool, args ...string) (string, error) {
	bin := r.Binary
	if bin == "" {
		bin = "tmux"
	}
	argv := append(r.Args(), args...)

	cmd := exec.CommandContext(ctx, bin, argv...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A client that starts the server must not hold us hostage through
	// inherited pipes once the context is done.
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if err == nil {
		return stdout.String(), nil
	}
	msg := strings.TrimSpace(stderr.String())
	cause := err
	if ctx.Err() != nil {
		cause = ctx.Err()
	} else if known := classify(msg); known != nil {
		cause = known
		if known == ErrNoServer && targetsSession {
			cause = noServerError{}
		}
	}
	if msg == "" {
		return "", opError(op, name, cause)
	}
	return "", opError(op, name, fmt.Errorf("%s: %w", msg, cause))
}

// classify maps tmux's stderr wording to a sentinel, or nil if unknown.
func classify(stderr string) error {
	switch {
	case strings.Contains(stderr, "no server running on"),
		strings.Contains(stderr, "error connecting to"),
		strings.Contains(stderr, "server exited unexpectedly"):
		return ErrNoServer
	case strings.Contains(stderr, "can't find session"),
		strings.Contains(stderr, "can't find window"),
		strings.Contains(stderr, "can't find pane"):
		return ErrNoSession
	case strings.Contains(stderr, "duplicate session"):
		return ErrDuplicateSession
	}
	return nil
}

// noServerError is the cause when a command names a session on a server
// that is not running: the session is as gone as the server.
type noServerError struct{}

func (noServerError) Error() string { return ErrNoServer.Error() }

func (noServerError) Is(target error) bool { return target == ErrNoServer || target == ErrNoSession }

// opError labels err with the tmux command and session it concerns, in the
// form `tmux: new-session "name": ...`.
func opError(op, name string, err error) error {
	if name == "" {
		return fmt.Errorf("tmux: %s: %w", op, err)
	}
	return fmt.Errorf("tmux: %s %q: %w", op, name, err)
}

// sessionTarget addresses exactly the named session, never a prefix match.
func sessionTarget(name string) string { return literal("=" + name) }

// paneTarget addresses the active pane of the named session's current
// window; the trailing ':' is required for pane commands to accept "=".
func paneTarget(name string) string { return "=" + name + ":" }

// literal keeps an argument whole through tmux's command parsing: tmux
// reads an argument that ends in ';' as that argument followed by a
// command separator (so "ls;" reached the pane as "ls", and ";" as
// nothing), and "\;" at the end as a literal ';'. Every argument made of a
// caller's text goes through it; the separators NewSession means are
// passed as bare ";" arguments.
func literal(s string) string {
	if strings.HasSuffix(s, ";") {
		return s[:len(s)-1] + `\;`
	}
	return s
}

func literals(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = literal(a)
	}
	return out
}

// escapeFormat makes s literal in arguments tmux expands as formats.
func escapeFormat(s string) string { return strings.ReplaceAll(s, "#", "##") }

// parseSession parses one line printed with sessionFormat.
func parseSession(line string) (Session, error) {
	f := strings.SplitN(line, "|", 6)
	if len(f) != 6 {
		return Session{}, fmt.Errorf("unexpected session line %q", line)
	}
	created, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return Session{}, fmt.Errorf("session line %q: created: %w", line, err)
	}
	attached, err := strconv.Atoi(f[1])
	if err != nil {
		return Session{}, fmt.Errorf("session line %q: attached: %w", line, err)
	}
	pid, err := strconv.Atoi(f[2])
	if err != nil {
		return Session{}, fmt.Errorf("session line %q: pane pid: %w", line, err)
	}
	status, err := strconv.Atoi(f[4]) // empty while the pane lives
	if err != nil && f[3] == "1" {
		status = -1 // dead, its status not collected yet
	}
	return Session{Name: f[5], Created: time.Unix(created, 0), Attached: attached > 0, PanePID: pid,
		PaneDead: f[3] == "1", PaneExitStatus: status}, nil
}

// checkDir fails unless dir is an existing directory: tmux would start the
// pane somewhere else without a word, and an agent in the wrong worktree is
// worse than no agent.
func checkDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("working directory %s is not a directory", dir)
	}
	return nil
}

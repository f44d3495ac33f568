package tools

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"
)

// A tool call has a time limit (seed 000's tool timeout): tools.timeout_seconds
// for every tool, tools.<tool>.timeout_seconds for one. The clock starts
// when the call does, so waiting for the writer lock counts. The handler's
// context is cancelled at the limit; a call whose limit passed before its
// transaction ends is refused with TIMEOUT and writes nothing but its audit
// record, so nothing commits after the deadline. Work outside git (the
// after-steps) is cancelled at the limit too, records how it ended as it
// does when its client goes, and the call answers TIMEOUT.

// defaultToolTimeout bounds any call: long enough for a delegated agent
// turn, short enough that a stuck call ends.
const defaultToolTimeout = 3600

// errTimedOut is the cause of a call's context cancelled at its limit.
var errTimedOut = errors.New("the call's time limit passed")

// timeoutKeys are the time limits' settings.
func timeoutKeys() []ConfigKey {
	return []ConfigKey{
		{Name: "tools.timeout_seconds", Kind: "int", Default: defaultToolTimeout,
			Doc: "seconds a tool call may take, from its start (waiting for the writer lock included) to its answer, before it is refused with TIMEOUT (nothing it would have written is kept; work outside git is stopped and recorded); tools.<tool>.timeout_seconds sets one tool's; a server launched with git codex mcp --tool-timeout (MCP_TOOL_TIMEOUT) uses its own instead of this one"},
	}
}

// timeoutKey is tools.<tool>.timeout_seconds, one tool's time limit.
func timeoutKey(key string) (ConfigKey, bool) {
	rest, ok := strings.CutPrefix(key, "tools.")
	tool, ok2 := strings.CutSuffix(rest, ".timeout_seconds")
	if !ok || !ok2 || tool == "" || strings.Trim(tool, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
		return ConfigKey{}, false
	}
	return ConfigKey{Name: key, Kind: "int", Default: defaultToolTimeout,
		Doc: "seconds a call of " + tool + " may take before TIMEOUT; unset: tools.timeout_seconds"}, true
}

// toolTimeout is the limit in force for tool, and what sets it: the
// tool's own key, else the server's launch (WithTimeout: git codex mcp
// --tool-timeout, MCP_TOOL_TIMEOUT), else tools.timeout_seconds.
func (c *Config) toolTimeout(ctx context.Context, tool string) (time.Duration, string) {
	key := "tools." + tool + ".timeout_seconds"
	if _, ok := c.Entry(key); ok {
		return time.Duration(c.IntValue(key)) * time.Second, key
	}
	if d, ok := ctx.Value(timeoutKeyCtx{}).(time.Duration); ok && d > 0 {
		return d, "MCP_TOOL_TIMEOUT"
	}
	key = "tools.timeout_seconds"
	return time.Duration(c.IntValue(key)) * time.Second, key
}

type timeoutKeyCtx struct{}

// WithTimeout returns ctx carrying a server's own time limit for the calls
// it serves (seed 000's MCP_TOOL_TIMEOUT): it replaces tools.timeout_seconds,
// and a tool's own tools.<tool>.timeout_seconds still wins over it.
func WithTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, timeoutKeyCtx{}, d)
}

// callLimit is one call's time limit: armed inside its transaction, once
// the config says what it is, and stopped when the call answers.
type callLimit struct {
	start  time.Time
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	timer    *time.Timer
	deadline time.Time
	limit    time.Duration
	key      string
}

// newCallLimit returns the context the call's handler and after-steps run
// in, cancelled with errTimedOut once the limit is armed and passes.
func newCallLimit(ctx context.Context) (context.Context, *callLimit) {
	ctx, cancel := context.WithCancelCause(ctx)
	return ctx, &callLimit{start: time.Now(), cancel: cancel}
}

// arm starts the clock for limit d (set by key); a second arm (a
// transaction run again) keeps the first.
func (l *callLimit) arm(d time.Duration, key string) {
	if l == nil || d <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.timer != nil {
		return
	}
	l.limit, l.key, l.deadline = d, key, l.start.Add(d)
	l.timer = time.AfterFunc(time.Until(l.deadline), func() { l.cancel(errTimedOut) })
}

// expired reports whether the limit has passed.
func (l *callLimit) expired() bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.timer != nil && !time.Now().Before(l.deadline)
}

// stop ends the call's context, its limit no longer needed.
func (l *callLimit) stop() {
	if l == nil {
		return
	}
	l.mu.Lock()
	if l.timer != nil {
		l.timer.Stop()
	}
	l.mu.Unlock()
	l.cancel(nil)
}

// err is the call's TIMEOUT: what ran out, and what became of the work.
func (l *callLimit) err(tool, what string, cause *Error) *Error {
	l.mu.Lock()
	defer l.mu.Unlock()
	secs := int(l.limit / time.Second)
	e := Errorf(Timeout, "%s did not finish within its time limit of %ds (%s); %s. Raise it with `git codex config set %s <seconds>`",
		tool, secs, l.key, what, "tools."+tool+".timeout_seconds").
		With("timeout_seconds", secs).With("key", l.key).With("elapsed_ms", time.Since(l.start).Milliseconds())
	if cause != nil && cause.Code != Timeout {
		e = e.With("cause_code", string(cause.Code)).With("cause", cause.Message)
	}
	return e
}

// timedOut reports whether ctx was cancelled by its call's time limit.
func timedOut(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errTimedOut)
}

package delegate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
)

// stopGrace is how long a turn asked to stop (SIGINT: interrupt, budget,
// a caller gone) has to end before its process group is killed.
const stopGrace = 5 * time.Second

// turnRun is one turn of a delegated session, as its runner (the process
// whose call started it) sees it.
type turnRun struct {
	d       Delegation
	l       instance.Launcher
	h       headless
	spec    turnSpec
	prompt  string
	stream  bool
	timeout time.Duration // the turn's wall-clock limit
	// maxLine and maxTranscript are the turn's caps on one output line
	// read whole and on its transcript (delegate.max_line_bytes,
	// delegate.max_transcript_bytes; 0: the defaults).
	maxLine       int
	maxTranscript int64
}

// turnOutcome is what the turn's process did.
type turnOutcome struct {
	Result         string
	AgentSessionID string
	CostUSD        float64
	NumTurns       int
	Tokens         int    // the turn's tokens, counted the way its CLI reports them
	AgentTokens    int    // the CLI's count for its whole session, where it reports one (codex)
	Reason         string // why it stopped early (partial result), if it did
	Failure        string // why it failed, if it did
	OverBudget     bool   // it ended past budget_tokens (a CLI that reports usage only at the end)
	LastError      string // the last error the CLI reported on the way (a retry, a refusal)
	ExitCode       int
	Stderr         string
	Finished       bool       // the CLI reported the turn's end (a result line)
	Cut            *OutputCut // what of the CLI's output was not kept (nil: nothing)

	skippedResult bool // a line skipped for its size looked like a result

	msgTokens map[string]int // per model message (claude repeats a message's usage per block)
	looseTok  int            // usage of lines that name no message
	afterTool bool           // a tool ran since the assistant's text began
}

// delegationDir is where a session's local files live: its transcript
// (<id>.jsonl) and, while a turn runs, <id>/pid and <id>/mcp.json. They
// are this machine's, outside every ref.
func delegationDir(gitDir string) string { return filepath.Join(gitDir, "codex", "delegations") }

// run starts the agent CLI in its own process group, reads its JSON lines
// (transcript, progress, budget) and waits for it. It never runs under
// the state's writer lock: it is an after-step.
func (r turnRun) run(ctx context.Context, gitDir string, progress tools.Progress) turnOutcome {
	var out turnOutcome
	dir := filepath.Join(delegationDir(gitDir), r.d.ID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		out.Failure = err.Error()
		return out
	}
	defer os.RemoveAll(dir)
	spec := r.spec
	if len(spec.MCPServers) > 0 && r.l.Name == "claude" {
		servers := map[string]any{}
		for _, s := range spec.MCPServers {
			servers[s.Name] = map[string]any{"command": s.Command, "args": s.Args, "env": s.Env}
		}
		b, _ := json.Marshal(map[string]any{"mcpServers": servers})
		spec.MCPConfig = filepath.Join(dir, "mcp.json")
		if err := os.WriteFile(spec.MCPConfig, b, 0o600); err != nil {
			out.Failure = err.Error()
			return out
		}
	}
	args, err := r.h.args(spec)
	if err != nil {
		out.Failure = err.Error()
		return out
	}
	// the launcher's command is a shell command line (agent.<name>.command):
	// sh runs it with exec, so the agent is the group's leader
	cmd := exec.Command("sh", append([]string{"-c", "exec " + r.l.Command + ` "$@"`, "sh"}, args...)...)
	cmd.Dir = r.d.WorkingDir
	cmd.Stdin = strings.NewReader(r.prompt)
	cmd.Env = delegateEnv(r.d.ID)
	cmd.SysProcAttr = instance.ProcAttr()
	stderr := &tailBuffer{max: 4096}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		out.Failure = err.Error()
		return out
	}
	if err := cmd.Start(); err != nil {
		out.Failure = fmt.Sprintf("cannot start %s: %v", r.l.Command, err)
		return out
	}
	pid := cmd.Process.Pid
	os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(pid)), 0o600)
	var transcript io.Writer
	if f, err := os.OpenFile(filepath.Join(delegationDir(gitDir), r.d.ID+".jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600); err == nil {
		defer f.Close()
		transcript = f
	}

	var stopOnce sync.Once
	var mu sync.Mutex
	stop := func(reason string) {
		stopOnce.Do(func() {
			mu.Lock()
			if out.Reason == "" {
				out.Reason = reason
			}
			mu.Unlock()
			syscall.Kill(-pid, syscall.SIGINT)
			go func() {
				time.Sleep(stopGrace)
				syscall.Kill(-pid, syscall.SIGKILL)
			}()
		})
	}
	done := make(chan struct{})
	defer close(done)
	if r.timeout > 0 {
		timer := time.AfterFunc(r.timeout, func() { stop(ReasonTimeout) })
		defer timer.Stop()
	}
	go func() {
		select {
		case <-ctx.Done():
			stop(ReasonDisconnect)
		case <-done:
		}
	}()

	nonJSON := r.read(stdout, transcript, &out, &mu, stop, func() { syscall.Kill(-pid, syscall.SIGKILL) }, progress)
	werr := cmd.Wait()
	out.Stderr = stderrTail(stderr.String())
	var exit *exec.ExitError
	if errors.As(werr, &exit) {
		out.ExitCode = exit.ExitCode()
	}
	mu.Lock()
	defer mu.Unlock()
	r.conclude(&out, werr, nonJSON)
	return out
}

// read reads the CLI's output lines until it ends: each is parsed and
// applied to out (under mu), reported as progress, and written to the
// transcript, none held whole past the turn's line cap (delegate_lines.go)
// and no more written than its transcript cap; out.Cut says what was not
// kept. A line that is not the CLI's JSON calls kill and is returned; the
// rest of the output is still read (and dropped), so the CLI never blocks
// on a full pipe.
func (r turnRun) read(src io.Reader, transcript io.Writer, out *turnOutcome, mu *sync.Mutex, stop func(reason string), kill func(), progress tools.Progress) (nonJSON string) {
	maxLine, maxTranscript := r.maxLine, r.maxTranscript
	if maxLine <= 0 {
		maxLine = defaultMaxLineBytes
	}
	if maxTranscript <= 0 {
		maxTranscript = defaultMaxTranscriptBytes
	}
	lines := newLineReader(src, maxLine)
	cut := OutputCut{MaxLineBytes: lines.max, MaxTranscript: maxTranscript}
	var written int64
	n := 0
	for {
		l, err := lines.next()
		switch {
		case nonJSON != "":
			// the turn is being killed: what is left is drained
		case l.skipped:
			cut.LinesSkipped++
			cut.BytesDropped += l.size
			if bytes.Contains(l.head, []byte(`"result"`)) {
				mu.Lock()
				out.skippedResult = true
				mu.Unlock()
			}
		case l.data != nil:
			if l.shortened {
				cut.LinesShortened++
				cut.BytesDropped += l.size - int64(len(l.data))
			}
			if transcript != nil {
				if written+int64(len(l.data))+1 <= maxTranscript {
					transcript.Write(append(l.data, '\n'))
					written += int64(len(l.data)) + 1
				} else {
					cut.TranscriptLines++
					cut.TranscriptBytes += int64(len(l.data)) + 1
				}
			}
			var ev agentEvent
			if perr := r.h.parse(l.data, &ev); perr != nil {
				nonJSON = string(l.data[:min(len(l.data), 4096)])
				kill()
				break
			}
			mu.Lock()
			over := r.apply(out, ev)
			mu.Unlock()
			if over {
				stop(ReasonBudget)
			}
			if msg := progressMessage(ev); msg != "" && progress != nil && r.stream {
				n++
				progress(n, msg)
			}
		}
		if err != nil {
			break
		}
	}
	if cut.any() {
		mu.Lock()
		out.Cut = &cut
		mu.Unlock()
	}
	return nonJSON
}

// conclude says how a turn ended once its process did: exited is the
// process's exit error, nonJSON the first line that was not the CLI's
// JSON.
func (r turnRun) conclude(out *turnOutcome, exited error, nonJSON string) {
	switch {
	case nonJSON != "":
		out.Failure = fmt.Sprintf("%s printed a line that is not its JSON output: %q", r.l.Name, tools.Truncate(nonJSON, 200))
	case out.Reason != "":
		// stopped on purpose: what came back is partial
	case exited != nil && !out.Finished:
		out.Failure = fmt.Sprintf("%s exited with %v before reporting a result", r.l.Name, exited)
	case !out.Finished && out.skippedResult:
		out.Failure = fmt.Sprintf("%s's result line was too large to read: %s", r.l.Name, out.Cut.Summary())
	case !out.Finished:
		out.Failure = fmt.Sprintf("%s ended without reporting a result", r.l.Name)
	case out.Failure == "" && r.d.BudgetTokens > 0 && out.Tokens > r.d.BudgetTokens:
		// the usage came with the turn's end: nothing could stop it
		out.OverBudget = true
	}
	if out.Failure != "" && out.LastError != "" && !strings.Contains(out.Failure, out.LastError) {
		out.Failure += "; it last reported: " + tools.Truncate(out.LastError, 300)
	}
}

// apply adds one event to the outcome, and reports whether the turn went
// over its token budget. Tokens are counted as the CLI reports them: a
// model message's usage once however many lines repeat it (claude), and
// the turn's total where the CLI gives one (claude's result, codex's
// turn.completed, gemini's result), less what the CLI had counted for
// its session before the turn where that total is the session's (codex).
func (r turnRun) apply(out *turnOutcome, ev agentEvent) bool {
	if ev.SessionID != "" {
		out.AgentSessionID = ev.SessionID
	}
	if u := ev.Usage; u != nil {
		n := u.total()
		switch {
		case ev.UsageTotal:
			if r.h.cumulative {
				out.AgentTokens = n
				if n >= r.d.AgentTokens {
					n -= r.d.AgentTokens
				}
			}
			out.Tokens = n
		case ev.UsageMsg != "":
			if out.msgTokens == nil {
				out.msgTokens = map[string]int{}
			}
			out.msgTokens[ev.UsageMsg] = n
		default:
			out.looseTok += n
		}
		if !ev.UsageTotal && !out.Finished {
			out.Tokens = out.looseTok
			for _, t := range out.msgTokens {
				out.Tokens += t
			}
		}
	}
	switch ev.Kind {
	case "assistant":
		if ev.Delta {
			if out.afterTool {
				// the text before a tool call was narration, not the answer
				out.Result, out.afterTool = "", false
			}
			out.Result += ev.Text
		} else {
			out.Result, out.afterTool = ev.Text, false
		}
	case "tool_use", "tool_result":
		out.afterTool = true
	case "error":
		if ev.Subtype != "warning" || out.LastError == "" {
			out.LastError = ev.Text
		}
	case "result":
		out.Finished = true
		out.CostUSD += ev.CostUSD
		out.NumTurns += ev.NumTurns
		if ev.Result != "" {
			out.Result = ev.Result
		}
		switch {
		case out.Reason != "":
			// git codex stopped it (budget, time, caller gone): the error
			// it reports (claude's error_during_execution) is the stop's
		case ev.Subtype == "error_max_turns":
			out.Reason = ReasonMaxTurns
		case ev.IsError:
			out.Failure = fmt.Sprintf("%s reported an error: %s", r.l.Name, firstNonEmpty(ev.Text, ev.Result, out.LastError, ev.Subtype, "(no reason given)"))
		}
	}
	return r.d.BudgetTokens > 0 && out.Tokens > r.d.BudgetTokens && !out.Finished
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// progressMessage is an event as seed 002's stream shows it, or "".
func progressMessage(ev agentEvent) string {
	var m map[string]any
	switch ev.Kind {
	case "assistant":
		m = map[string]any{"type": "assistant", "message": ev.Text}
	case "tool_use":
		m = map[string]any{"type": "tool_use", "name": ev.Tool, "input": ev.Input}
		if len(ev.Input) == 0 {
			m["input"] = map[string]any{}
		}
	case "tool_result":
		m = map[string]any{"type": "tool_result", "content": ev.Text}
		if ev.Tool != "" {
			m["name"] = ev.Tool
		}
	case "error":
		m = map[string]any{"type": "error", "message": ev.Text}
		if ev.Subtype != "" {
			m["kind"] = ev.Subtype
		}
		if ev.Tool != "" {
			m["name"] = ev.Tool
		}
	case "result":
		m = map[string]any{"type": "result", "result": ev.Result, "cost_usd": ev.CostUSD}
	default:
		return ""
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// delegateEnv is the agent process's environment: the caller's, without
// its git codex credential (the delegated agent is not the caller), and
// with CODEX_DELEGATION naming the session.
func delegateEnv(id string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "CODEX_TOKEN=") || strings.HasPrefix(kv, "CODEX_DELEGATION=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "CODEX_DELEGATION="+id)
}

// signalTurn sends sig to the process group of a session's running turn
// on this machine (its runner wrote the leader's pid), and reports whether
// there was one.
func signalTurn(gitDir, id string, sig syscall.Signal) bool {
	b, err := os.ReadFile(filepath.Join(delegationDir(gitDir), id, "pid"))
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return false
	}
	return syscall.Kill(-pid, sig) == nil
}

// tailBuffer keeps the last max bytes written to it (an agent's stderr).
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

var _ io.Writer = (*tailBuffer)(nil)

// ansiEscape matches a terminal's escape sequences (colours, cursor).
var ansiEscape = tools.LazyRegexp("\x1b\\[[0-9;?]*[ -/]*[@-~]|\x1b\\][^\x07]*\x07")

// stderrTail is what a person needs of an agent CLI's stderr: its last
// lines without terminal escapes and without a stack trace's frames.
func stderrTail(s string) string {
	s = ansiEscape.ReplaceAllString(s, "")
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "at ") {
			continue
		}
		keep = append(keep, tools.Truncate(t, 400))
	}
	if len(keep) > 6 {
		keep = keep[len(keep)-6:]
	}
	return strings.Join(keep, "\n")
}

// Package mcpserver serves a tools.Registry over MCP to one caller fixed at
// launch: what `git codex mcp` runs. It lists the tools the caller's policy
// allows and follows the policy while it runs (server.go), offers the tools
// the caller's work rarely needs through tool_find and tool_call (more.go),
// the prompt registry as MCP prompts (prompts.go), over a stdio transport
// of its own that answers bad lines and loses no answer at the end of input
// (stdio.go). Every call, tool or prompt, goes through the registry: the
// same admission, audit commit and envelope as the CLI's.
//
// It is a package of its own, not a file of the CLI, so that the CLI's
// `mcp` command is an adapter (flags, the caller's Origin, the start
// check, signals) and the server's tests need no CLI (issue 26).
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const instructions = "git codex coordinates AI coding agents inside this git repository. " +
	"Every tool call is recorded as a commit on refs/codex/state. Results are envelopes: " +
	`{"ok":true,"data":...} or {"ok":false,"error":{"code","message","details","tool_name","instance_id"}}, with a timestamp; branch on error.code. ` +
	"Only the tools your policy allows are listed; the list changes (notifications/tools/list_changed) when the policy does. " +
	"Tools your work rarely needs are not listed up front: tool_call names them and calls one, tool_find shows their schemas."

// pollInterval is how often a running server looks at the state's tip
// for a policy change made by someone else (its own calls are checked as
// they finish). A look that finds the tip unchanged reads the ref and its
// commit; the policy is read again only when the tip moved.
const pollInterval = 2 * time.Second

// inputEndGrace is how long calls may still run once the client closed
// its input before they are cancelled (a delegated turn then stops and
// records that its caller disconnected).
const inputEndGrace = 2 * time.Second

// Options are how a server runs; the zero value serves with no log, no
// level set from the start, and the config's time limits.
type Options struct {
	// Logger gets the server's own log (stderr, for `git codex mcp`:
	// stdout carries only the protocol); nil discards it.
	Logger *slog.Logger
	// Level is the MCP log level set at launch (--log-level,
	// mcp.log_level): a session's until its client sets one; "" for none.
	Level string
	// Timeout is the launch's time limit for calls (--tool-timeout,
	// MCP_TOOL_TIMEOUT); 0: the config's.
	Timeout time.Duration
	// Version is the version the server gives in its implementation info.
	Version string
}

// Serve serves one client on in and out (newline-delimited JSON-RPC, see
// stdio.go) until the input ends or ctx does. Once input ends, calls read
// before it still get their answers (piped requests), but a call still
// running after inputEndGrace has lost its client: it is cancelled, and
// Serve returns once every call has recorded how it ended. The caller
// owns the process: signals, and SIGPIPE on a client gone, are its to
// handle.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		s.watch(watchCtx, pollInterval)
	}()
	inputEnded := func() { time.AfterFunc(inputEndGrace, s.close) }
	err := s.run(ctx, &stdioTransport{in: in, out: out, inputEnded: inputEnded})
	s.close()
	s.inflight.Wait() // calls still running were cancelled: let them record how they ended
	stopWatch()
	<-watched // before the caller closes the store
	return err
}

// Server serves the registry's tools to one caller. It lists only the
// tools the caller's policy allows, and follows the policy while it runs;
// every tools/call, listed or not, goes through the registry, so a tool
// the caller may not use (or that does not exist) is refused with the same
// envelope and audit record as `git codex call` gives.
type Server struct {
	reg     *tools.Registry
	st      *gitstate.Store
	caller  string
	origin  tools.Origin // the caller and its credentials, fixed at launch
	logger  *slog.Logger
	srv     *mcp.Server
	level   string        // Options.Level
	timeout time.Duration // Options.Timeout

	errSchema *jsonschema.Schema // of a refusal's error, in every tool's output schema
	kick      chan struct{}      // a call may have changed the policy: look (see watch)
	isUp      atomic.Bool        // the instance is recorded up (see up)
	// inflight counts calls running: the server waits for them when its
	// client goes (a delegated turn then stops and records how it ended).
	inflight sync.WaitGroup
	memory   memoryReturner  // gives freed memory back between calls (memory.go)
	closing  context.Context // done once the client is gone
	close    context.CancelFunc

	mu     sync.Mutex // guards looked, tip and listed, and serialises refresh
	looked bool       // refresh has read the state once
	tip    string     // the state commit listed was computed at ("" before init)
	listed map[string]bool
	more   string // the deferred tools tool_call names, comma-separated ("": none, and neither it nor tool_find is listed)
}

// New serves reg's tools and prompts to the caller whose origin
// (identity and credentials) is o: every call, tool or prompt, carries it.
// It lists what the policy allows at st's tip now; Serve serves a client.
func New(reg *tools.Registry, st *gitstate.Store, o tools.Origin, opts Options) *Server {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	errSchema, err := jsonschema.For[tools.Error](nil)
	if err != nil {
		panic("mcp: error schema: " + err.Error()) // a fixed type: every test that starts a server infers it
	}
	errSchema = tools.PortableOutput(errSchema)
	errSchema.Description = "why the call was refused; branch on code"
	reg = withPromptCache(reg)
	s := &Server{reg: reg, st: st, caller: o.ID, origin: o, logger: logger, level: opts.Level, timeout: opts.Timeout,
		errSchema: errSchema, kick: make(chan struct{}, 1), listed: map[string]bool{}}
	s.closing, s.close = context.WithCancel(context.Background())
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "git-codex", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       logger,
		// Tools are advertised even while the policy allows none: the
		// list may fill up when the policy changes.
		Capabilities: &mcp.ServerCapabilities{
			//lint:ignore SA1019 deprecated in protocol 2026-07-28, used by clients of earlier ones
			Logging: &mcp.LoggingCapabilities{},
			Tools:   &mcp.ToolCapabilities{ListChanged: true},
		},
	})
	// The middleware answers every tools/call itself: go-sdk would answer a
	// name it does not list with a protocol error, unaudited.
	s.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" {
				return s.call(ctx, r)
			}
			res, err := next(ctx, method, req)
			if err == nil && !s.isUp.Load() && !strings.HasPrefix(method, "notifications/") {
				s.up(ctx, req.GetParams())
			}
			return res, err
		}
	})
	servePrompts(s.srv, reg, st, o, logger) // the prompt registry as MCP prompts (prompts.go)
	s.refresh(context.Background())
	return s
}

// run serves one session over t until it ends or ctx does, as
// mcp.Server.Run does, with the session's log level set from the start
// to the launch's (s.level): a client that never sends logging/setLevel
// still gets notifications at that level.
func (s *Server) run(ctx context.Context, t mcp.Transport) error {
	var opts *mcp.ServerSessionOptions
	if s.level != "" {
		//lint:ignore SA1019 logging is deprecated in MCP 2026-07-28; clients of earlier versions use it
		opts = &mcp.ServerSessionOptions{State: &mcp.ServerSessionState{LogLevel: mcp.LoggingLevel(s.level)}}
	}
	ss, err := s.srv.Connect(ctx, t, opts)
	if err != nil {
		return err
	}
	closed := make(chan error, 1)
	go func() { closed <- ss.Wait() }()
	select {
	case <-ctx.Done():
		ss.Close()
		<-closed
		return ctx.Err()
	case err := <-closed:
		return err
	}
}

// SlogLevel is an MCP log level as the server's own log's ("": warnings):
// what `git codex mcp` writes to stderr.
func SlogLevel(level string) slog.Level {
	switch level {
	case "debug":
		return slog.LevelDebug
	case "info", "notice":
		return slog.LevelInfo
	case "", "warning":
		return slog.LevelWarn
	}
	return slog.LevelError
}

// call runs one tool through the registry, logs it to the client at the
// level it asked for, and has watch look for a policy change it may have
// made.
func (s *Server) call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name, args := req.Params.Name, req.Params.Arguments
	s.inflight.Add(1)
	defer s.inflight.Done()
	defer func() { s.memory.after(time.Now()) }()
	// a call outlives neither its client nor the server (a delegated turn
	// then stops and records how it ended)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.closing, cancel)()
	if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
		// a long call's messages (agent_query_stream) as progress
		// notifications, in the order they come
		var mu sync.Mutex
		ctx = tools.WithProgress(ctx, func(n int, msg string) {
			mu.Lock()
			defer mu.Unlock()
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(n), Message: msg})
			if err != nil {
				s.logger.Debug("progress not sent", "err", err)
			}
		})
	}
	if s.timeout > 0 {
		ctx = tools.WithTimeout(ctx, s.timeout)
	}
	var res tools.Result
	handled := false
	switch name { // the way to the tools not listed up front (more.go)
	case toolFind:
		res, handled = s.findTools(ctx, args), true
	case toolCall:
		var e *tools.Error
		if name, args, e = unwrapCall(args); e != nil {
			name, res, handled = toolCall, tools.Result{Error: e}, true
		}
	}
	if !handled {
		res = s.reg.CallAs(ctx, s.st, s.origin, name, args)
	}
	text, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	if res.OK {
		s.logger.Info("call", "tool", name, "commit", res.Commit)
		s.log(ctx, req.Session, "info", map[string]any{"event": "call", "tool": name, "commit": res.Commit})
	} else {
		level := "warning"
		if res.Error.Code == tools.InternalError {
			level = "error"
		}
		s.logger.Warn("tool refused", "tool", name, "code", res.Error.Code, "message", res.Error.Message)
		s.log(ctx, req.Session, level, map[string]any{"event": "refused", "tool": name, "code": res.Error.Code, "message": res.Error.Message, "commit": res.Commit})
	}
	if t, ok := s.reg.Lookup(name); ok && res.OK && t.ChangesPolicy() {
		// The call may have changed the policy: watch looks, after this
		// response is on its way rather than before. (Other calls leave
		// it alone; watch's polling finds changes made elsewhere.)
		select {
		case s.kick <- struct{}{}:
		default: // a look is due already
		}
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(text)}},
		StructuredContent: json.RawMessage(text),
		IsError:           !res.OK,
	}, nil
}

// up records that the instance this server serves is up (tools.MarkUp):
// its agent CLI started the server, which answers its first request now
// — initialize, or server/discover in MCP 2026-07-28, which has no
// initialize and is what Claude Code 2.1.328 sends first. Spawn waits for
// that. A failure to record it is logged, not fatal (the next request
// tries again, and the agent's first tool call records it too).
func (s *Server) up(ctx context.Context, p mcp.Params) {
	if tools.IsHuman(s.caller) {
		s.isUp.Store(true)
		return
	}
	client := "its client"
	if ip, ok := p.(*mcp.InitializeParams); ok && ip != nil && ip.ClientInfo != nil && ip.ClientInfo.Name != "" {
		client = ip.ClientInfo.Name
	} else if p != nil {
		if info, ok := p.GetMeta()[mcp.MetaKeyClientInfo].(map[string]any); ok {
			if name, ok := info["name"].(string); ok && name != "" {
				client = name
			}
		}
	}
	if _, err := s.reg.MarkUp(context.WithoutCancel(ctx), s.st, s.origin, client); err != nil {
		s.logger.Warn("cannot record that the instance is up", "instance", s.caller, "err", err)
		return
	}
	s.isUp.Store(true)
}

// log sends a notifications/message to the client; go-sdk drops it unless
// the client asked for that level or a lower one (logging/setLevel, or the
// request's _meta). MCP 2026-07-28 deprecates logging, for the stderr of
// stdio servers (ours has it too); clients of earlier versions use it.
func (s *Server) log(ctx context.Context, ss *mcp.ServerSession, level string, data map[string]any) {
	if ss == nil {
		return
	}
	//lint:ignore SA1019 see above
	msg := &mcp.LoggingMessageParams{Logger: "git-codex", Level: mcp.LoggingLevel(level), Data: data}
	//lint:ignore SA1019 see above
	if err := ss.Log(ctx, msg); err != nil {
		s.logger.Debug("log notification not sent", "err", err)
	}
}

// watch looks for policy changes every interval, and after each call that
// may have changed the policy, until ctx ends.
func (s *Server) watch(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.kick:
		}
		s.refresh(ctx)
	}
}

// refresh lists the tools the caller's policy allows at the state's tip,
// if the tip moved since the last look. Adding or removing tools makes
// go-sdk send notifications/tools/list_changed.
func (s *Server) refresh(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var permitted, deferred []*tools.Tool
	tip := ""
	err := s.st.View(ctx, func(sn *gitstate.Snapshot) error {
		tip = sn.Commit()
		if s.looked && tip == s.tip {
			return nil
		}
		var err error
		permitted, deferred, err = s.reg.Listing(sn, s.caller)
		return err
	})
	switch {
	case errors.Is(err, gitstate.ErrNotInitialized):
		// nothing may be called before `git codex init`
	case err != nil:
		// Keep what is listed: calls are checked by the registry anyway.
		s.logger.Warn("cannot read the policy", "err", err)
		return
	}
	if s.looked && tip == s.tip {
		return
	}
	s.looked, s.tip = true, tip
	want := map[string]*tools.Tool{}
	for _, t := range permitted {
		want[t.Name] = t
	}
	var gone []string
	for name := range s.listed {
		if want[name] == nil {
			gone = append(gone, name)
			delete(s.listed, name)
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		s.srv.RemoveTools(gone...)
	}
	// Build every new tool (schemas are inferred on first use, slowly)
	// before adding any: each AddTool restarts go-sdk's short debounce of
	// list_changed, so adds spread out in time let a client list a half
	// added set.
	var add []*mcp.Tool
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if !s.listed[name] {
			add = append(add, s.mcpTool(want[name]))
			s.listed[name] = true
		}
	}
	var names []string
	for _, t := range deferred {
		names = append(names, t.Name)
	}
	switch more := strings.Join(names, ", "); {
	case more == s.more:
	case more == "":
		s.srv.RemoveTools(toolCall, toolFind)
	default:
		add = append(add, s.moreTools(names)...) // replaces them when the names changed
	}
	s.more = strings.Join(names, ", ")
	for _, t := range add {
		s.srv.AddTool(t, s.call)
	}
}

// mcpTool is a tool as tools/list shows it: its input schema, the schema
// of the envelope its results carry as structuredContent, and hints.
func (s *Server) mcpTool(t *tools.Tool) *mcp.Tool {
	h := t.Hints
	destructive := !h.ReadOnly && !h.Additive
	return &mcp.Tool{
		Name:         t.Name,
		Description:  t.Description,
		InputSchema:  t.InputSchema(),
		OutputSchema: envelopeSchema(t.OutputSchema(), s.errSchema),
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    h.ReadOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  h.Idempotent,
		},
	}
}

// envelopeSchema describes a call's structuredContent: {ok, data} with the
// tool's output as data, or {ok, error} for a refusal.
func envelopeSchema(data, errSchema *jsonschema.Schema) *jsonschema.Schema {
	return &jsonschema.Schema{
		Type:     "object",
		Required: []string{"ok"},
		Properties: map[string]*jsonschema.Schema{
			"ok":        {Type: "boolean", Description: "true when the call succeeded (data), false when it was refused (error)"},
			"data":      data,
			"error":     errSchema,
			"warnings":  {Type: "array", Items: &jsonschema.Schema{Type: "string"}, Description: "what to know about how the call was recorded: a credential redacted from what it wrote, a call as an agent that did not prove who it is"},
			"notice":    {Type: "string", Description: "what to know besides the answer, e.g. that a read was answered without its audit record"},
			"timestamp": {Type: "string", Format: "date-time", Description: "when the call answered, RFC 3339 in UTC"},
		},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
}

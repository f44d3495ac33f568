// Package modelapi is a stand-in for the model APIs the agent CLIs call,
// for tests: an HTTP server on 127.0.0.1 that speaks, as streams,
//
//   - Anthropic's Messages API (POST /v1/messages, server-sent events
//     message_start, content_block_start/delta/stop, message_delta,
//     message_stop), which Claude Code calls at ANTHROPIC_BASE_URL;
//   - OpenAI's Responses API (POST <base>/responses, server-sent events
//     response.created, response.output_item.added/done,
//     response.output_text.delta, response.completed), which Codex CLI
//     calls through a model provider (CodexConfig);
//   - Gemini's generateContent and streamGenerateContent (?alt=sse:
//     data lines, each a GenerateContentResponse), which Gemini CLI calls
//     at GOOGLE_GEMINI_BASE_URL.
//
// A test scripts the model: each request of an agent's turn (one that
// offers tools) takes the next Reply; a reply is text, tool calls, an
// error status or no answer at all. With several agents at one server
// (a coder and the reviewer git codex spawns for it, both pointed here by
// one launcher), a reply can be meant for one of them (Reply.To): each
// request then takes the first reply left that is meant for it. Side requests (Gemini CLI's model
// router, a request without tools) get a short answer and take nothing
// from the script. Every request is kept for the test to read.
//
// It is test infrastructure: nothing the shipped binary links imports it.
package modelapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Reply is what the model answers to one request of an agent's turn.
type Reply struct {
	// Text is the assistant's text (before any tool calls).
	Text string
	// ToolCalls are the tools the model calls, in order.
	ToolCalls []ToolCall
	// Usage is the usage the API reports for the request; zero: 100
	// input tokens and 10 output tokens.
	Usage Usage
	// Status, when not 0, answers with this HTTP status and the API's
	// error body instead (e.g. 500, 529 or 503 overloaded, 401, 429),
	// ErrorType and Error in it (defaults per API and status).
	Status    int
	ErrorType string
	Error     string
	// Hang accepts the request and never answers (until the client
	// goes away or the server is closed).
	Hang bool
	// Delay waits this long before answering.
	Delay time.Duration
	// To, when set, keeps the reply for a request whose user messages
	// (the words the agent was given: its prompt and what was typed into
	// it, not tool results) contain it; a request takes the first reply
	// left in the script that is for it. Agents run concurrently ask in
	// no fixed order: this is what tells them apart.
	To string
}

// ToolCall is a call of a tool by the model: its name as the CLI offers
// it (e.g. mcp__git-codex__agent_get_status) and its arguments.
type ToolCall struct {
	Name string
	Args map[string]any
}

// Usage is the token usage an API reports. Each API has its own names:
// Anthropic's input_tokens, cache_creation_input_tokens,
// cache_read_input_tokens and output_tokens; OpenAI's input_tokens (the
// cached ones among them, input_tokens_details.cached_tokens) and
// output_tokens; Gemini's promptTokenCount (cachedContentTokenCount among
// them), candidatesTokenCount and totalTokenCount.
type Usage struct {
	Input      int // tokens of the request not read from a cache
	CacheRead  int // tokens read from the prompt cache
	CacheWrite int // tokens written to the prompt cache (Anthropic)
	Output     int
}

func (u Usage) orDefault() Usage {
	if u == (Usage{}) {
		return Usage{Input: 100, Output: 10}
	}
	return u
}

// Request is one request the server received.
type Request struct {
	API    string // "anthropic", "openai" or "gemini"
	Method string
	Path   string // with its query
	Header http.Header
	Body   []byte
	// Turn says the request was one of an agent's turn (it offered
	// tools) and took a reply from the script.
	Turn bool
	// Tools are the names of the tools it offered.
	Tools []string
	// Reply is the index of the script's reply it got (-1: none).
	Reply int
	// At is when it arrived.
	At time.Time
}

// Server is a running stand-in.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:<port>.
	URL string

	srv *http.Server
	ln  net.Listener

	mu       sync.Mutex
	script   []Reply
	taken    []bool // of script
	used     int
	requests []Request
	done     chan struct{}
	closing  sync.Once
}

// New starts a server that answers with replies, in order.
func New(replies ...Reply) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), ln: ln, script: replies, done: make(chan struct{})}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// Start starts a server for a test and closes it when the test ends.
func Start(tb testing.TB, replies ...Reply) *Server {
	tb.Helper()
	s, err := New(replies...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server; requests left hanging end.
func (s *Server) Close() {
	s.closing.Do(func() {
		close(s.done)
		s.srv.Close()
	})
}

// Script appends replies to the script.
func (s *Server) Script(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
}

// Requests are the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// TurnRequests are the requests received so far that took a reply.
func (s *Server) TurnRequests() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Turn {
			out = append(out, r)
		}
	}
	return out
}

// Took reports whether reply i (0-based) of the script was taken.
func (s *Server) Took(i int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return i >= 0 && i < len(s.taken) && s.taken[i]
}

// Used is how many replies of the script were taken.
func (s *Server) Used() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

// ClaudeEnv is the environment that points Claude Code at the server.
func (s *Server) ClaudeEnv() []string {
	return []string{"ANTHROPIC_BASE_URL=" + s.URL, "ANTHROPIC_API_KEY=sk-ant-api03-standin", "CLAUDE_CODE_MAX_RETRIES=0"}
}

// GeminiEnv is the environment that points Gemini CLI at the server
// (settings must choose the API key: GeminiSettings).
func (s *Server) GeminiEnv() []string {
	return []string{"GOOGLE_GEMINI_BASE_URL=" + s.URL, "GEMINI_API_KEY=standin-key"}
}

// GeminiSettings is a user settings file (~/.gemini/settings.json) that
// signs Gemini CLI in with GEMINI_API_KEY.
const GeminiSettings = `{"security":{"auth":{"selectedType":"gemini-api-key"}}}`

// CodexConfig is a Codex CLI config.toml ($CODEX_HOME/config.toml, by
// default ~/.codex/config.toml) whose model provider is the server:
// model_providers.<name> with base_url, env_key and wire_api
// "responses", retries off (Codex retries a failed stream 5 times).
// Its key is read from STANDIN_API_KEY (CodexEnv).
func (s *Server) CodexConfig() string {
	return fmt.Sprintf(`model_provider = "standin"
model = "standin-model"

[model_providers.standin]
name = "standin"
base_url = "%s/v1"
env_key = "STANDIN_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`, s.URL)
}

// CodexEnv is the environment CodexConfig's provider reads its key from.
func (s *Server) CodexEnv() []string { return []string{"STANDIN_API_KEY=standin-key"} }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body, Reply: -1, At: time.Now()}
	path := r.URL.Path
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/v1/messages"):
		req.API = "anthropic"
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/responses"):
		req.API = "openai"
	case r.Method == http.MethodPost && (strings.HasSuffix(path, ":streamGenerateContent") || strings.HasSuffix(path, ":generateContent")):
		req.API = "gemini"
	default:
		// Claude Code's HEAD /api/hello, counting tokens, anything else
		s.record(req)
		if r.Method == http.MethodHead || r.Method == http.MethodGet {
			w.WriteHeader(http.StatusOK)
			return
		}
		http.Error(w, `{"error":{"message":"not served by the stand-in"}}`, http.StatusNotFound)
		return
	}
	req.Tools = toolNames(req.API, body)
	req.Turn = len(req.Tools) > 0
	var reply Reply
	if req.Turn {
		said := userText(req.API, body)
		s.mu.Lock()
		for len(s.taken) < len(s.script) {
			s.taken = append(s.taken, false)
		}
		for i, r := range s.script {
			if !s.taken[i] && (r.To == "" || strings.Contains(said, r.To)) {
				reply, req.Reply = r, i
				s.taken[i] = true
				s.used++
				break
			}
		}
		if req.Reply < 0 {
			reply = Reply{Status: 500, Error: "the stand-in's script has no reply left for this request"}
		}
		s.mu.Unlock()
	}
	s.record(req)
	if reply.Delay > 0 {
		select {
		case <-time.After(reply.Delay):
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
	if reply.Hang {
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return
	}
	if reply.Status != 0 {
		writeError(w, req.API, reply)
		return
	}
	switch req.API {
	case "anthropic":
		if !req.Turn {
			reply = Reply{Text: "ok", Usage: Usage{Input: 10, Output: 1}}
		}
		writeAnthropic(w, body, reply, req.Reply)
	case "openai":
		writeOpenAI(w, reply, req.Reply)
	case "gemini":
		if !req.Turn {
			reply = Reply{Text: geminiSideAnswer(body), Usage: Usage{Input: 10, Output: 5}}
		}
		writeGemini(w, strings.HasSuffix(path, ":streamGenerateContent"), reply)
	}
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
}

// toolNames are the names of the tools a request offers, in each API's
// request shape. Codex 0.169 offers some tools in namespaces (an MCP
// server's are in mcp__<server, - as _>): those are named
// "<namespace>.<name>", which is also how a ToolCall names them. It may
// also send tools inside an additional_tools input item.
func toolNames(api string, body []byte) []string {
	var names []string
	var walk func(v any, ns string)
	walk = func(v any, ns string) {
		switch t := v.(type) {
		case []any:
			for _, e := range t {
				walk(e, ns)
			}
		case map[string]any:
			n, _ := t["name"].(string)
			if sub, ok := t["tools"]; ok {
				if t["type"] == "namespace" && n != "" {
					walk(sub, n+".")
				} else {
					walk(sub, ns)
				}
			} else if n != "" {
				names = append(names, ns+n)
			}
			if fd, ok := t["functionDeclarations"]; ok {
				walk(fd, ns)
			}
		}
	}
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	walk(m["tools"], "")
	if api == "openai" {
		if in, ok := m["input"].([]any); ok {
			for _, it := range in {
				if item, ok := it.(map[string]any); ok && item["type"] == "additional_tools" {
					walk(item["tools"], "")
				}
			}
		}
	}
	return names
}

// userText is the text of a request's user messages, in each API's
// request shape: what the agent was told (its prompt, messages typed into
// its pane, the CLI's own context notes), without tool results.
func userText(api string, body []byte) string {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	var b strings.Builder
	add := func(v any) {
		if s, ok := v.(string); ok {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	// parts adds the text of a content given as a string or as a list of
	// parts whose text is under key text (of types in kinds, any if none)
	parts := func(content any, kinds ...string) {
		if s, ok := content.(string); ok {
			add(s)
			return
		}
		list, _ := content.([]any)
		for _, p := range list {
			pm, _ := p.(map[string]any)
			if t, _ := pm["type"].(string); pm != nil && (len(kinds) == 0 || slices.Contains(kinds, t)) {
				add(pm["text"])
			}
		}
	}
	switch api {
	case "anthropic":
		msgs, _ := m["messages"].([]any)
		for _, x := range msgs {
			if msg, ok := x.(map[string]any); ok && msg["role"] == "user" {
				parts(msg["content"], "text")
			}
		}
	case "openai":
		in, _ := m["input"].([]any)
		for _, x := range in {
			if it, ok := x.(map[string]any); ok && it["role"] == "user" {
				parts(it["content"], "input_text")
			}
		}
	case "gemini":
		contents, _ := m["contents"].([]any)
		for _, x := range contents {
			if c, ok := x.(map[string]any); ok && c["role"] == "user" {
				parts(c["parts"])
			}
		}
	}
	return b.String()
}

// geminiSideAnswer answers Gemini CLI's side requests: its model router
// asks for a complexity score as JSON, its next-speaker check for the
// next speaker.
func geminiSideAnswer(body []byte) string {
	switch {
	case bytes.Contains(body, []byte("complexity_score")):
		return `{"complexity_reasoning":"stand-in","complexity_score":10}`
	case bytes.Contains(body, []byte("next_speaker")):
		return `{"reasoning":"stand-in","next_speaker":"user"}`
	}
	return "ok"
}

// writeError answers with an API's error body.
func writeError(w http.ResponseWriter, api string, r Reply) {
	msg, typ := r.Error, r.ErrorType
	var body any
	switch api {
	case "anthropic":
		if typ == "" {
			typ = map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error",
				429: "rate_limit_error", 529: "overloaded_error"}[r.Status]
			if typ == "" {
				typ = "api_error"
			}
		}
		if msg == "" {
			msg = map[string]string{"authentication_error": "invalid x-api-key", "overloaded_error": "Overloaded", "api_error": "Internal server error"}[typ]
		}
		body = map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
		w.Header().Set("request-id", "req_standin")
	case "openai":
		if typ == "" {
			typ = map[int]string{401: "invalid_request_error", 429: "rate_limit_exceeded", 503: "server_error"}[r.Status]
			if typ == "" {
				typ = "server_error"
			}
		}
		if msg == "" {
			msg = map[int]string{401: "Incorrect API key provided: standin-key."}[r.Status]
			if msg == "" {
				msg = "The server had an error while processing your request."
			}
		}
		code := any(nil)
		if r.Status == 401 {
			code = "invalid_api_key"
		}
		body = map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}}
	case "gemini":
		if typ == "" {
			typ = map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}[r.Status]
			if typ == "" {
				typ = "INTERNAL"
			}
		}
		if msg == "" {
			msg = map[string]string{"UNAVAILABLE": "The model is overloaded. Please try again later.", "INVALID_ARGUMENT": "API key not valid. Please pass a valid API key."}[typ]
			if msg == "" {
				msg = "An internal error has occurred."
			}
		}
		body = map[string]any{"error": map[string]any{"code": r.Status, "message": msg, "status": typ}}
	}
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(r.Status)
	w.Write(b)
}

// sse writes server-sent events, flushing each.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

// event writes one event; name "" writes a data line alone (Gemini's).
func (s *sse) event(name string, data any) {
	b, _ := json.Marshal(data)
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if s.f != nil {
		s.f.Flush()
	}
}

func argsJSON(a map[string]any) string {
	if a == nil {
		return "{}"
	}
	b, _ := json.Marshal(a)
	return string(b)
}

// writeAnthropic answers a Messages API request as its stream: the
// message's usage in message_start (output_tokens 1, as the API sends
// it), each content block, and the output tokens in message_delta.
func writeAnthropic(w http.ResponseWriter, body []byte, r Reply, n int) {
	var req struct {
		Model string `json:"model"`
	}
	json.Unmarshal(body, &req)
	u := r.Usage.orDefault()
	id := fmt.Sprintf("msg_standin%04d", n+1)
	s := newSSE(w)
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": u.Input, "cache_creation_input_tokens": u.CacheWrite, "cache_read_input_tokens": u.CacheRead, "output_tokens": 1},
	}})
	i := 0
	if r.Text != "" || len(r.ToolCalls) == 0 {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, part := range chunks(r.Text) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": part}})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	for k, tc := range r.ToolCalls {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{
			"type": "tool_use", "id": fmt.Sprintf("toolu_standin%04d_%d", n+1, k), "name": tc.Name, "input": map[string]any{}}})
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": argsJSON(tc.Args)}})
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	stop := "end_turn"
	if len(r.ToolCalls) > 0 {
		stop = "tool_use"
	}
	s.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": u.Output}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

// chunks splits text into a few deltas, as a stream would.
func chunks(text string) []string {
	if len(text) < 8 {
		return []string{text}
	}
	h := len(text) / 2
	for h < len(text) && (text[h]&0xC0) == 0x80 {
		h++
	}
	return []string{text[:h], text[h:]}
}

// writeOpenAI answers a Responses API request as its stream: the
// response created, each output item (a message with output_text, or a
// function_call) added and done, text deltas, and the response
// completed with its usage.
func writeOpenAI(w http.ResponseWriter, r Reply, n int) {
	u := r.Usage.orDefault()
	respID := fmt.Sprintf("resp_standin%04d", n+1)
	s := newSSE(w)
	seq := 0
	ev := func(name string, m map[string]any) {
		m["type"], m["sequence_number"] = name, seq
		seq++
		s.event(name, m)
	}
	resp := map[string]any{"id": respID, "object": "response", "created_at": time.Now().Unix(), "status": "in_progress", "model": "standin-model", "output": []any{}}
	ev("response.created", map[string]any{"response": resp})
	ev("response.in_progress", map[string]any{"response": resp})
	var output []any
	idx := 0
	if r.Text != "" || len(r.ToolCalls) == 0 {
		itemID := fmt.Sprintf("msg_standin%04d", n+1)
		ev("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{"type": "message", "id": itemID, "status": "in_progress", "role": "assistant", "content": []any{}}})
		ev("response.content_part.added", map[string]any{"item_id": itemID, "output_index": idx, "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		for _, part := range chunks(r.Text) {
			ev("response.output_text.delta", map[string]any{"item_id": itemID, "output_index": idx, "content_index": 0, "delta": part})
		}
		ev("response.output_text.done", map[string]any{"item_id": itemID, "output_index": idx, "content_index": 0, "text": r.Text})
		part := map[string]any{"type": "output_text", "text": r.Text, "annotations": []any{}}
		ev("response.content_part.done", map[string]any{"item_id": itemID, "output_index": idx, "content_index": 0, "part": part})
		item := map[string]any{"type": "message", "id": itemID, "status": "completed", "role": "assistant", "content": []any{part}}
		ev("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		output = append(output, item)
		idx++
	}
	for k, tc := range r.ToolCalls {
		item := map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_standin%04d_%d", n+1, k), "call_id": fmt.Sprintf("call_standin%04d_%d", n+1, k),
			"name": tc.Name, "arguments": argsJSON(tc.Args), "status": "completed"}
		if ns, name, ok := strings.Cut(tc.Name, "."); ok {
			// a tool of a namespace (Codex 0.169 offers its tools so)
			item["namespace"], item["name"] = ns, name
		}
		added := map[string]any{}
		for k, v := range item {
			added[k] = v
		}
		added["arguments"], added["status"] = "", "in_progress"
		ev("response.output_item.added", map[string]any{"output_index": idx, "item": added})
		ev("response.function_call_arguments.delta", map[string]any{"item_id": item["id"], "output_index": idx, "delta": item["arguments"]})
		ev("response.function_call_arguments.done", map[string]any{"item_id": item["id"], "output_index": idx, "arguments": item["arguments"]})
		ev("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		output = append(output, item)
		idx++
	}
	done := map[string]any{}
	for k, v := range resp {
		done[k] = v
	}
	done["status"], done["output"] = "completed", output
	done["usage"] = map[string]any{
		"input_tokens": u.Input + u.CacheRead, "input_tokens_details": map[string]any{"cached_tokens": u.CacheRead},
		"output_tokens": u.Output, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": u.Input + u.CacheRead + u.Output,
	}
	ev("response.completed", map[string]any{"response": done})
}

// writeGemini answers generateContent (one JSON response) or
// streamGenerateContent?alt=sse (data lines: text chunks, then the
// function calls, then the finish reason with the usage).
func writeGemini(w http.ResponseWriter, stream bool, r Reply) {
	u := r.Usage.orDefault()
	usage := map[string]any{"promptTokenCount": u.Input + u.CacheRead, "candidatesTokenCount": u.Output, "totalTokenCount": u.Input + u.CacheRead + u.Output}
	if u.CacheRead > 0 {
		usage["cachedContentTokenCount"] = u.CacheRead
	}
	var parts []any
	for _, c := range chunks(r.Text) {
		if c != "" {
			parts = append(parts, map[string]any{"text": c})
		}
	}
	for _, tc := range r.ToolCalls {
		args := tc.Args
		if args == nil {
			args = map[string]any{}
		}
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": tc.Name, "args": args}})
	}
	resp := func(ps []any, final bool) map[string]any {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": ps}, "index": 0}
		m := map[string]any{"candidates": []any{cand}, "modelVersion": "standin-model", "responseId": "standin"}
		if final {
			cand["finishReason"] = "STOP"
			m["usageMetadata"] = usage
		}
		return m
	}
	if !stream {
		b, _ := json.Marshal(resp(parts, true))
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
		return
	}
	s := newSSE(w)
	for i, p := range parts {
		s.event("", resp([]any{p}, i == len(parts)-1))
	}
	if len(parts) == 0 {
		s.event("", resp([]any{map[string]any{"text": ""}}, true))
	}
}

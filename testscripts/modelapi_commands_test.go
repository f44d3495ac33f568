package testscripts

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/gitcodex/git-codex/tools/modelapi"
	"github.com/rogpeppe/go-internal/testscript"
)

// modelAPICommands are the commands of the scripts whose real agent CLIs
// talk to a scripted model:
//
//	modelapi start [REPLY...]
//	    starts the stand-in model API (tools/modelapi) on loopback,
//	    scripted with the replies, and points Claude Code at it
//	    (ANTHROPIC_BASE_URL, and NO_PROXY=127.0.0.1 past the scripts'
//	    closed proxy; start it before the first spawn, whose tmux server
//	    keeps the environment it was started with). A reply is
//	    JSON: {"text": "...", "tool_calls": [{"name": "mcp__git-codex__agent_get_status", "args": {}}]}.
//	    The server stops when the script ends.
//
//	modelapi used N
//	    waits (90 s) until N replies of the script were taken.
func modelAPICommands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"modelapi": cmdModelAPI,
	}
}

// modelAPIKey finds a script's modelAPIHolder among its values.
type modelAPIKey struct{}

// modelAPIHolder is the stand-in a script started, if any.
type modelAPIHolder struct{ srv *modelapi.Server }

// scriptedReply is a reply as a script writes it.
type scriptedReply struct {
	Text      string `json:"text"`
	ToolCalls []struct {
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	} `json:"tool_calls"`
}

func cmdModelAPI(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: modelapi start [REPLY...] | modelapi used N")
	}
	holder := ts.Value(modelAPIKey{}).(*modelAPIHolder)
	switch args[0] {
	case "start":
		if holder.srv != nil {
			ts.Fatalf("modelapi: already started")
		}
		var replies []modelapi.Reply
		for _, a := range args[1:] {
			var r scriptedReply
			if err := json.Unmarshal([]byte(a), &r); err != nil {
				ts.Fatalf("modelapi: reply %s: %v", a, err)
			}
			reply := modelapi.Reply{Text: r.Text}
			for _, c := range r.ToolCalls {
				if c.Args == nil {
					c.Args = map[string]any{}
				}
				reply.ToolCalls = append(reply.ToolCalls, modelapi.ToolCall{Name: c.Name, Args: c.Args})
			}
			replies = append(replies, reply)
		}
		srv, err := modelapi.New(replies...)
		ts.Check(err)
		holder.srv = srv
		ts.Defer(srv.Close)
		ts.Setenv("ANTHROPIC_BASE_URL", srv.URL)
		ts.Setenv("CLAUDE_CODE_MAX_RETRIES", "0")
		// the scripts send every other host to a proxy that does not
		// exist; the stand-in is reached directly
		ts.Setenv("NO_PROXY", "127.0.0.1")
		ts.Setenv("no_proxy", "127.0.0.1")
	case "used":
		if holder.srv == nil || len(args) != 2 {
			ts.Fatalf("usage: modelapi used N (after modelapi start)")
		}
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		for deadline := time.Now().Add(90 * time.Second); holder.srv.Used() < n; time.Sleep(200 * time.Millisecond) {
			if time.Now().After(deadline) {
				ts.Fatalf("modelapi: %d of the script's replies taken in 90 s; want %d (requests: %d)", holder.srv.Used(), n, len(holder.srv.Requests()))
			}
		}
	default:
		ts.Fatalf("usage: modelapi start [REPLY...] | modelapi used N")
	}
}

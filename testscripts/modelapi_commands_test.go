package testscripts

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/tools/modelapi"
	"github.com/rogpeppe/go-internal/testscript"
)

// modelAPICommands drive a stand-in of the agent CLIs' model APIs
// (tools/modelapi) in the test process, for scripts that run the real
// CLIs with only their model scripted:
//
//	modelapi start
//	    starts it; $MODELAPI is its URL, and ANTHROPIC_BASE_URL and
//	    GOOGLE_GEMINI_BASE_URL point at it (after agentcli, which points
//	    them at a closed port). 127.0.0.1 is kept from the scripts' HTTP
//	    proxy (NO_PROXY): the CLIs reach the stand-in directly.
//
//	modelapi script FILE
//	    appends the replies in FILE (a JSON list of {"to", "text",
//	    "tools": [{"name", "args"}], "status", "hang"}: modelapi.Reply) to
//	    the script.
//
//	modelapi wait I
//	    waits (90 s) until reply I (0-based, in the order scripted) was
//	    taken.
//
//	modelapi requests
//	    prints one line per request of an agent's turn: the API, the
//	    index of the reply it took (-1: none) and the tools it offered.
func modelAPICommands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"modelapi": cmdModelAPI,
	}
}

// modelAPIKey finds a script's modelAPIHolder among its values.
type modelAPIKey struct{}

// modelAPIHolder is the stand-in a script started, if any.
type modelAPIHolder struct{ srv *modelapi.Server }

// scriptedReply is a modelapi.Reply as a script file writes it.
type scriptedReply struct {
	To    string `json:"to"`
	Text  string `json:"text"`
	Tools []struct {
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	} `json:"tools"`
	Status int  `json:"status"`
	Hang   bool `json:"hang"`
}

func cmdModelAPI(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: modelapi start | script FILE | wait I | requests")
	}
	holder := ts.Value(modelAPIKey{}).(*modelAPIHolder)
	if args[0] == "start" {
		if holder.srv != nil {
			ts.Fatalf("modelapi: already started")
		}
		srv, err := modelapi.New()
		ts.Check(err)
		holder.srv = srv
		// the evidence is kept however the script ends (a pass's $WORK
		// is removed): before the script's end kills the tmux server
		// (deferred calls run last first)
		ts.Defer(func() {
			keepEvidence(ts, srv)
			srv.Close()
		})
		ts.Setenv("MODELAPI", srv.URL)
		ts.Setenv("ANTHROPIC_BASE_URL", srv.URL)
		ts.Setenv("GOOGLE_GEMINI_BASE_URL", srv.URL)
		ts.Setenv("NO_PROXY", "127.0.0.1,localhost")
		return
	}
	srv := holder.srv
	if srv == nil {
		ts.Fatalf("modelapi: run `modelapi start` first")
	}
	switch args[0] {
	case "script":
		if len(args) != 2 {
			ts.Fatalf("usage: modelapi script FILE")
		}
		b, err := os.ReadFile(ts.MkAbs(args[1]))
		ts.Check(err)
		var list []scriptedReply
		if err := json.Unmarshal(b, &list); err != nil {
			ts.Fatalf("modelapi script: %s: %v", args[1], err)
		}
		for _, r := range list {
			reply := modelapi.Reply{To: r.To, Text: r.Text, Status: r.Status, Hang: r.Hang}
			for _, t := range r.Tools {
				reply.ToolCalls = append(reply.ToolCalls, modelapi.ToolCall{Name: t.Name, Args: t.Args})
			}
			srv.Script(reply)
		}
	case "wait":
		if len(args) != 2 {
			ts.Fatalf("usage: modelapi wait I")
		}
		i, err := strconv.Atoi(args[1])
		ts.Check(err)
		start := time.Now()
		for deadline := start.Add(90 * time.Second); !srv.Took(i); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				ts.Fatalf("modelapi wait: reply %d was not taken (%d replies were); requests (and when, from the wait's start):\n%s%s", i, srv.Used(), timedLines(srv, start), keepEvidence(ts, srv))
			}
		}
		ts.Logf("modelapi wait: reply %d taken %.1fs into the wait; requests:\n%s", i, time.Since(start).Seconds(), timedLines(srv, start))
	case "requests":
		fmt.Fprint(ts.Stdout(), turnLines(srv))
	default:
		ts.Fatalf("modelapi: unknown subcommand %q", args[0])
	}
}

// turnLines lists the requests of agents' turns, one a line.
func turnLines(srv *modelapi.Server) string {
	var b strings.Builder
	for _, r := range srv.TurnRequests() {
		fmt.Fprintf(&b, "%s reply %d tools %d\n", r.API, r.Reply, len(r.Tools))
	}
	return b.String()
}

// timedLines lists every request, side requests too, with when it came
// (seconds from since), for a wait
// that failed.
func timedLines(srv *modelapi.Server, since time.Time) string {
	var b strings.Builder
	for _, r := range srv.Requests() {
		fmt.Fprintf(&b, "%+7.1fs %s reply %d tools %d turn %v\n", r.At.Sub(since).Seconds(), r.API, r.Reply, len(r.Tools), r.Turn)
	}
	return b.String()
}

// keepEvidence writes what tells why a script failed into $WORK
// (kept with -testwork): every request the stand-in received, bodies
// included (modelapi-requests.json: what each agent was told, the tool
// results it got), and the screen of each tmux pane of the script
// (panes/<session>.txt, with its history), read before the script's end
// kills the server. It returns a line saying where they are.
func keepEvidence(ts *testscript.TestScript, srv *modelapi.Server) string {
	type kept struct {
		API   string
		Path  string
		Reply int
		Tools int
		At    time.Time
		Body  json.RawMessage
	}
	var list []kept
	for _, r := range srv.Requests() {
		body := json.RawMessage(r.Body)
		if !json.Valid(body) {
			body, _ = json.Marshal(string(r.Body))
		}
		list = append(list, kept{API: r.API, Path: r.Path, Reply: r.Reply, Tools: len(r.Tools), At: r.At, Body: body})
	}
	b, _ := json.MarshalIndent(list, "", " ")
	work := ts.Getenv("WORK")
	os.WriteFile(filepath.Join(work, "modelapi-requests.json"), b, 0o644)
	tmuxCmd := func(args ...string) ([]byte, error) {
		cmd := exec.Command("tmux", args...)
		cmd.Env = append(os.Environ(), "TMUX_TMPDIR="+ts.Getenv("TMUX_TMPDIR"))
		return cmd.Output()
	}
	os.MkdirAll(filepath.Join(work, "panes"), 0o755)
	names, _ := tmuxCmd("list-sessions", "-F", "#{session_name}")
	for _, name := range strings.Fields(string(names)) {
		if screen, err := tmuxCmd("capture-pane", "-p", "-J", "-S", "-", "-t", "="+name+":"); err == nil {
			os.WriteFile(filepath.Join(work, "panes", name+".txt"), screen, 0o644)
		}
	}
	return fmt.Sprintf("the requests' bodies are in $WORK/modelapi-requests.json, the panes' screens in $WORK/panes (%d requests; sessions: %s)\n",
		len(list), strings.Join(strings.Fields(string(names)), " "))
}

package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The command's own test, and the helpers the CLI's tests share with it; the
// server's tests are package mcpserver's.

const mcpHuman = "human:test@example.com"

// mcpRepo is a temporary repository with initialised state and the agents
// alice (worker) and boss (supervisor).
func mcpRepo(t *testing.T) string {
	t.Helper()
	dir := gitstatetest.NewRepo(t)
	st := mcpStore(t, dir)
	if _, err := builtin.Registry().Init(context.Background(), st, tools.Origin{ID: mcpHuman}); err != nil {
		t.Fatal(err)
	}
	reg := builtin.Registry()
	for _, args := range []string{`{"id":"alice","type":"worker"}`, `{"id":"boss","type":"supervisor"}`} {
		if r := reg.CallAs(context.Background(), st, tools.Origin{ID: mcpHuman}, "agent_register", json.RawMessage(args)); !r.OK {
			t.Fatalf("agent_register %s: %+v", args, r.Error)
		}
	}
	return dir
}

func mcpStore(t *testing.T, dir string) *gitstate.Store {
	t.Helper()
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// envelope is a call's structured content, checked against its text
// content and its isError flag.
type envelope struct {
	OK        bool            `json:"ok"`
	Data      json.RawMessage `json:"data"`
	Error     *tools.Error    `json:"error"`
	Timestamp string          `json:"timestamp"`
}

func mcpCall(t *testing.T, cs *mcp.ClientSession, tool, args string) envelope {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s %s: %v", tool, args, err)
	}
	structured, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var env envelope
	if err := json.Unmarshal(structured, &env); err != nil {
		t.Fatalf("%s: structured content %s: %v", tool, structured, err)
	}
	if env.OK == res.IsError {
		t.Fatalf("%s: isError %v with envelope %s", tool, res.IsError, structured)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content blocks, want the envelope as text", tool, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s: content is %T, want text", tool, res.Content[0])
	}
	var a, b any
	json.Unmarshal([]byte(text.Text), &a)
	json.Unmarshal(structured, &b)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("%s: text content %s differs from structured content %s", tool, text.Text, structured)
	}
	return env
}

// lastAudit is the newest audit commit: the newest read if it read the
// state's tip (a read sees the tip under the writer lock, so one made
// after the tip names it), else the state's tip. Commit times, to the
// second, cannot order the two chains.
func lastAudit(t *testing.T, dir string) string {
	t.Helper()
	tip := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)
	read := gitstatetest.Git(t, dir, "log", "-1", "--format=%H %(trailers:key="+gitstate.TrailerReadAt+",valueonly)", "--glob="+gitstate.ReadsPrefix+"*/*")
	if h, at, ok := strings.Cut(read, " "); ok && at == tip {
		return h
	}
	return tip
}

// TestMCPCommandCaller runs `git codex mcp` in-process over pipes and checks
// who the server acts as: --as after mcp (how agent configs write it),
// before it, CODEX_INSTANCE, or the person.
func TestMCPCommandCaller(t *testing.T) {
	dir := mcpRepo(t)
	tests := []struct {
		args     []string
		instance string
		want     string
	}{
		{[]string{"mcp", "--as", "alice"}, "", "alice"},
		{[]string{"--as", "alice", "mcp"}, "", "alice"},
		{[]string{"mcp", "--as=boss"}, "alice", "boss"},
		{[]string{"--as", "alice", "mcp", "--as", "boss"}, "", "boss"},
		{[]string{"mcp"}, "boss", "boss"},
		{[]string{"mcp"}, "", mcpHuman},
	}
	t.Chdir(dir) // Main works in the current directory
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " ")+" CODEX_INSTANCE="+tt.instance, func(t *testing.T) {
			t.Setenv("CODEX_INSTANCE", tt.instance)
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			var stderr syncBuffer
			done := make(chan int, 1)
			go func() {
				code := Main(append([]string{"git-codex"}, tt.args...), inR, outW, &stderr)
				outW.Close()
				done <- code
			}()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, nil).
				Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
			if err != nil {
				t.Fatalf("connect: %v; stderr: %s", err, stderr.String())
			}
			env := mcpCall(t, cs, "agent_get_status", `{}`)
			var a tools.Agent
			if err := json.Unmarshal(env.Data, &a); err != nil || a.ID != tt.want {
				t.Errorf("acting as %q (%v), want %q", a.ID, err, tt.want)
			}
			cs.Close()
			select {
			case code := <-done:
				if code != 0 {
					t.Errorf("exit %d after stdin closed; stderr: %s", code, stderr.String())
				}
			case <-ctx.Done():
				t.Fatal("the server did not exit after stdin closed")
			}
		})
	}
}

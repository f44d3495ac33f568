package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
)

// promptRepo is mcpRepo with the Climpt registry fixture in its working
// tree.
func promptRepo(t *testing.T) string {
	t.Helper()
	dir := mcpRepo(t)
	ar, err := txtar.ParseFile(filepath.Join("..", "..", "..", "tools", "prompts", "testdata", "climpt.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		writeTree(t, dir, f.Name, string(f.Data))
	}
	return dir
}

func writeTree(t *testing.T, dir, name, data string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// promptClient connects a go-sdk client that reports prompts/list_changed
// notifications on the returned channel.
func promptClient(t *testing.T, dir, caller string) (*mcp.ClientSession, <-chan struct{}) {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(&syncBuffer{}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv := New(builtin.Registry(), mcpStore(t, dir), tools.Origin{ID: caller}, Options{Logger: logger}).srv
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 16)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, &mcp.ClientOptions{
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) { changed <- struct{}{} },
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs, changed
}

func promptNames(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Prompt {
	t.Helper()
	res, err := cs.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*mcp.Prompt{}
	for _, p := range res.Prompts {
		out[p.Name] = p
	}
	return out
}

func waitChanged(t *testing.T, changed <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatalf("no prompts/list_changed %s", what)
	}
}

// waitList waits for list_changed notifications until the prompts listed
// satisfy ok (a notification may be one of an earlier change's).
func waitList(t *testing.T, cs *mcp.ClientSession, changed <-chan struct{}, what string, ok func(map[string]*mcp.Prompt) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case <-changed:
			if ok(promptNames(t, cs)) {
				return
			}
		case <-deadline:
			t.Fatalf("no prompts/list_changed %s; listed: %v", what, promptNames(t, cs))
		}
	}
}

func TestMCPPromptsListAndGet(t *testing.T) {
	dir := promptRepo(t)
	cs, _ := promptClient(t, dir, "alice")
	ps := promptNames(t, cs)
	for _, n := range []string{"git.group-commit.unstaged-changes", "git.merge-up.base-branch", "test.run.specific", "codex.work.task", "codex.review.changes", "codex.address.feedback"} {
		if ps[n] == nil {
			t.Errorf("prompts/list lacks %s: %v", n, ps)
		}
	}
	if len(ps) != 11 {
		t.Errorf("%d prompts, want 11", len(ps))
	}
	gc := ps["git.group-commit.unstaged-changes"]
	var args []string
	for _, a := range gc.Arguments {
		args = append(args, a.Name)
	}
	if want := []string{"edition", "adaptation", "input_text_file", "destination_path", "task"}; !reflect.DeepEqual(args, want) ||
		gc.Description != "Group file changes by semantic proximity and execute multiple commits sequentially" {
		t.Errorf("group-commit prompt: %v %q", args, gc.Description)
	}
	if tr := ps["test.run.specific"]; tr.Arguments[2].Name != "uv-target" || !strings.Contains(tr.Arguments[2].Description, "test target") {
		t.Errorf("test run specific arguments: %+v", tr.Arguments[2])
	}

	n := commitCount(t, dir)
	res, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "git.group-commit.unstaged-changes",
		Arguments: map[string]string{"adaptation": "detailed", "input_text_file": "a.go"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 1 || res.Messages[0].Role != "user" || res.Messages[0].Content.(*mcp.TextContent).Text != "DETAILED: group a.go by meaning.\n" {
		t.Errorf("prompts/get = %+v", res.Messages)
	}
	if commitCount(t, dir) != n+1 || lastTrailers(t, dir) != "prompt_execute/alice/ok" {
		t.Errorf("prompts/get audit: %d commits, %s", commitCount(t, dir)-n, lastTrailers(t, dir))
	}

	// an argument the command does not declare: a JSON-RPC error carrying
	// the tool's error, and an audited refusal
	_, err = cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "git.group-commit.unstaged-changes", Arguments: map[string]string{"input_text": "x"}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.HasPrefix(we.Message, "INVALID_INPUT") {
		t.Fatalf("undeclared argument: %v", err)
	}
	var te tools.Error
	if json.Unmarshal(we.Data, &te) != nil || te.Code != tools.InvalidInput || te.Details["option"] != "input_text" {
		t.Errorf("error data %s", we.Data)
	}
	if lastTrailers(t, dir) != "prompt_execute/alice/INVALID_INPUT" {
		t.Errorf("refusal audit: %s", lastTrailers(t, dir))
	}
}

func TestMCPPromptsListChanged(t *testing.T) {
	dir := promptRepo(t)
	cs, changed := promptClient(t, dir, "alice")
	promptNames(t, cs)

	// after a reload through the tool
	if env := mcpCall(t, cs, "prompt_reload", `{}`); !env.OK {
		t.Fatalf("prompt_reload: %+v", env.Error)
	}
	waitChanged(t, changed, "after prompt_reload")

	// when a template appears in the working tree while the server runs
	writeTree(t, dir, ".agent/climpt/prompts/docs/write/changelog/f_default.md", "---\ndescription: Write the changelog entry\n---\nChangelog: {input_text}")
	waitList(t, cs, changed, "after a template was added", func(ps map[string]*mcp.Prompt) bool {
		return ps["docs.write.changelog"] != nil && ps["docs.write.changelog"].Description == "Write the changelog entry"
	})

	// when registry.json changes: a command it drops (with no template) is gone
	writeTree(t, dir, ".agent/climpt/registry.json", `{"version":"2","tools":{"commands":[]}}`)
	waitList(t, cs, changed, "after registry.json changed", func(ps map[string]*mcp.Prompt) bool {
		return ps["git.merge-up.base-branch"] == nil && ps["git.group-commit.unstaged-changes"] != nil && ps["codex.work.task"] != nil
	})

	// another agent's folder appearing
	writeTree(t, dir, ".agent/iterator/registry.json", `{"tools":{"commands":[{"c1":"dev","c2":"start","c3":"issue","description":"Start work on an issue"}]}}`)
	waitList(t, cs, changed, "after an agent folder appeared", func(ps map[string]*mcp.Prompt) bool {
		return ps["iterator.dev.start.issue"] != nil
	})

	// quiet when nothing changes (after the last change's notifications)
	time.Sleep(300 * time.Millisecond)
	for len(changed) > 0 {
		<-changed
	}
	select {
	case <-changed:
		t.Error("list_changed with nothing changed")
	case <-time.After(2500 * time.Millisecond):
	}
}

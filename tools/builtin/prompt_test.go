package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/prompt"
	"github.com/gitcodex/git-codex/tools/prompts"
	"github.com/rogpeppe/go-internal/txtar"
)

// withClimpt copies the Climpt registry fixture (tools/prompts/testdata)
// into the repository's working tree, as a team would commit it.
func (e *env) withClimpt() *env {
	e.t.Helper()
	ar, err := txtar.ParseFile(filepath.Join("..", "prompts", "testdata", "climpt.txtar"))
	if err != nil {
		e.t.Fatal(err)
	}
	for _, f := range ar.Files {
		e.writeFile(f.Name, string(f.Data))
	}
	return e
}

func (e *env) writeFile(name, data string) {
	e.t.Helper()
	p := filepath.Join(e.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func decode[T any](t *testing.T, r tools.Result) T {
	t.Helper()
	if !r.OK {
		t.Fatalf("call failed: %+v", r.Error)
	}
	b, _ := json.Marshal(r.Data)
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestPromptSearchDescribeExecute(t *testing.T) {
	e := newEnv(t).withClimpt()
	e.ok(human, "agent_register", `{"id":"w1","type":"worker"}`)
	n := e.commits()
	tree := e.tree()

	s := decode[prompt.PromptSearchResult](t, e.call("w1", "prompt_search", `{"query":"group changes and commit"}`))
	if s.Agent != "climpt" || len(s.Results) == 0 || s.Results[0].C2 != "group-commit" || s.Results[0].C3 != "unstaged-changes" {
		t.Fatalf("search = %+v", s)
	}
	if s.Results[0].Score <= 0 || s.Results[0].Score > 1 || len(s.Warnings) != 0 {
		t.Errorf("search = %+v", s)
	}
	// the envelope's data is seed 004's shape
	raw, _ := json.Marshal(e.call("w1", "prompt_search", `{"query":"group changes and commit","limit":1}`))
	var env struct {
		OK   bool `json:"ok"`
		Data struct {
			Results []map[string]any `json:"results"`
		} `json:"data"`
	}
	json.Unmarshal(raw, &env)
	if !env.OK || len(env.Data.Results) != 1 {
		t.Fatalf("envelope %s", raw)
	}
	var fields []string
	for k := range env.Data.Results[0] {
		fields = append(fields, k)
	}
	if want := "c1 c2 c3 description score"; strings.Join(sorted(fields), " ") != want {
		t.Errorf("result fields %v, want %s", fields, want)
	}

	d := decode[prompt.PromptDescription](t, e.call("w1", "prompt_describe", `{"c1":"git","c2":"group-commit","c3":"unstaged-changes"}`))
	if d.Description != "Group file changes by semantic proximity and execute multiple commits sequentially" || d.Usage != "climpt-git group-commit unstaged-changes" ||
		!d.Options.File || d.Options.Stdin || !d.Options.Destination || d.Source != "template" ||
		!reflect.DeepEqual(d.Accepts, []string{"edition", "adaptation", "input_text_file", "destination_path"}) {
		t.Errorf("describe = %+v", d)
	}

	x := decode[prompt.PromptExecuted](t, e.call("w1", "prompt_execute",
		`{"agent":"climpt","c1":"git","c2":"group-commit","c3":"unstaged-changes","options":{"input_text_file":"changes.txt","destination_path":"plan.md"}}`))
	want := "\n# Instructions\nGroup the changes in changes.txt by meaning and commit each group.\nWrite the plan to plan.md. Keep {this} as written.\n"
	if x.Prompt != want || x.Template != ".agent/climpt/prompts/git/group-commit/unstaged-changes/f_default.md" || x.Edition != "default" {
		t.Errorf("execute = %+v\nprompt %q", x, x.Prompt)
	}
	x = decode[prompt.PromptExecuted](t, e.call("w1", "prompt_execute",
		`{"c1":"git","c2":"group-commit","c3":"unstaged-changes","options":{"adaptation":"detailed","input_text_file":"a.go"}}`))
	if x.Prompt != "DETAILED: group a.go by meaning.\n" || x.Adaptation != "detailed" {
		t.Errorf("detailed = %+v", x)
	}

	// reads only: every call is an audit commit, on the reads ref, and the
	// state is unchanged
	if e.tree() != tree || e.commits() != n {
		t.Error("prompt tools moved the state")
	}
	msg := e.lastMessage()
	if !strings.Contains(msg, "Codex-Tool: prompt_execute") || !strings.Contains(msg, "Codex-Result: ok") || !strings.Contains(msg, gitstate.TrailerReadAt+": ") {
		t.Errorf("audit:\n%s", msg)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestPromptExecuteContext(t *testing.T) {
	e := newEnv(t)
	e.ok(human, "agent_register", `{"id":"c1","type":"coding"}`)
	task := e.ok(human, "task_create", `{"title":"Fix the parser","description":"It drops the last line."}`)
	id := task["id"].(string)
	x := decode[prompt.PromptExecuted](t, e.call("c1", "prompt_execute",
		`{"c1":"codex","c2":"work","c3":"task","task":"`+id+`","options":{"input_text":"Be quick."}}`))
	for _, s := range []string{"You are c1, a coding agent", id + ": Fix the parser", "It drops the last line.", "Be quick.", "the worktree " + e.dir + " on the branch main;"} {
		if !strings.Contains(x.Prompt, s) {
			t.Errorf("work prompt lacks %q:\n%s", s, x.Prompt)
		}
	}
	if strings.Contains(x.Prompt, "{codex_") || strings.Contains(x.Prompt, "{input_text}") || x.Template != "builtin:codex/work/task/f_default.md" {
		t.Errorf("unfilled variables or wrong template %s:\n%s", x.Template, x.Prompt)
	}
	// in a linked worktree, the branch checked out there
	wt := filepath.Join(t.TempDir(), "wt")
	gitstatetest.Git(t, e.dir, "commit", "-q", "--allow-empty", "-m", "first")
	gitstatetest.Git(t, e.dir, "worktree", "add", "-q", "-b", "feature/x", wt)
	st, err := gitstate.Open(wt, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	x = decode[prompt.PromptExecuted](t, e.reg.CallAs(context.Background(), st, tools.Origin{ID: "c1"}, "prompt_execute", json.RawMessage(`{"c1":"codex","c2":"work","c3":"task"}`)))
	if !strings.Contains(x.Prompt, "the worktree "+wt+" on the branch feature/x;") {
		t.Errorf("work prompt in a linked worktree:\n%s", x.Prompt)
	}
	r := decode[prompt.PromptExecuted](t, e.call("c1", "prompt_execute",
		`{"c1":"codex","c2":"review","c3":"changes","options":{"uv-coder":"c7","uv-base":"main"}}`))
	if !strings.Contains(r.Prompt, "the work of c7") || !strings.Contains(r.Prompt, "git diff main...HEAD") {
		t.Errorf("review prompt:\n%s", r.Prompt)
	}
}

func TestPromptRefusals(t *testing.T) {
	e := newEnv(t).withClimpt()
	e.writeFile(".agent/climpt/prompts/bad/front/matter/f_default.md", "---\ntitle: [\n---\nbody")
	e.writeFile(".agent/broken/registry.json", "{\n  \"tools\": {\n    \"commands\": [\n      {\"c1\": \"a\",}\n    ]\n  }\n}\n")
	e.writeFile(".agent/noopts/registry.json", `{"tools":{"commands":[{"c1":"x","c2":"y","c3":"z","description":"no template"}]}}`)
	e.ok(human, "agent_register", `{"id":"w1","type":"worker"}`)
	tests := []struct {
		name, args string
		tool       string
		code       tools.Code
		details    map[string]any
	}{
		{"empty query", `{"query":"   "}`, "prompt_search", tools.InvalidInput, map[string]any{"field": "query"}},
		{"stop words only", `{"query":"and the of"}`, "prompt_search", tools.InvalidInput, map[string]any{"field": "query"}},
		{"negative limit", `{"query":"commit","limit":-1}`, "prompt_search", tools.InvalidInput, map[string]any{"field": "limit"}},
		{"agent escaping .agent", `{"query":"commit","agent":"../x"}`, "prompt_search", tools.InvalidInput, map[string]any{"field": "agent"}},
		{"unknown command", `{"c1":"git","c2":"invalid-command","c3":"target"}`, "prompt_describe", tools.CommandNotFound,
			map[string]any{"c1": "git", "c2": "invalid-command", "c3": "target", "agent": "climpt"}},
		{"path escaping the prompts folder", `{"c1":"..","c2":"..","c3":"etc"}`, "prompt_execute", tools.InvalidInput, map[string]any{"field": "c1"}},
		{"slash in a name", `{"c1":"git","c2":"a/b","c3":"c"}`, "prompt_describe", tools.InvalidInput, map[string]any{"field": "c2"}},
		{"broken front matter", `{"c1":"bad","c2":"front","c3":"matter"}`, "prompt_execute", tools.RegistryLoadFailed,
			map[string]any{"path": ".agent/climpt/prompts/bad/front/matter/f_default.md", "line": float64(2)}},
		{"malformed registry.json", `{"agent":"broken","c1":"a","c2":"b","c3":"c"}`, "prompt_describe", tools.RegistryLoadFailed,
			map[string]any{"path": ".agent/broken/registry.json", "line": float64(4)}},
		{"missing registry.json", `{"agent":"nobody","c1":"a","c2":"b","c3":"c"}`, "prompt_describe", tools.RegistryLoadFailed,
			map[string]any{"path": ".agent/nobody/registry.json", "cause": "file not found"}},
		{"reload with a broken template", `{}`, "prompt_reload", tools.RegistryLoadFailed,
			map[string]any{"path": ".agent/climpt/prompts/bad/front/matter/f_default.md"}},
		{"reload of a malformed registry", `{"agent":"broken"}`, "prompt_reload", tools.RegistryLoadFailed,
			map[string]any{"path": ".agent/broken/registry.json", "line": float64(4), "count": float64(0)}},
		{"undeclared option", `{"c1":"git","c2":"group-commit","c3":"unstaged-changes","options":{"input_text":"x"}}`, "prompt_execute", tools.InvalidInput,
			map[string]any{"option": "input_text"}},
		{"undeclared uv", `{"c1":"test","c2":"run","c3":"specific","options":{"uv-other":"x"}}`, "prompt_execute", tools.InvalidInput,
			map[string]any{"option": "uv-other"}},
		{"context is not an option", `{"c1":"codex","c2":"work","c3":"task","options":{"codex_caller":"boss"}}`, "prompt_execute", tools.InvalidInput,
			map[string]any{"option": "codex_caller"}},
		{"unknown edition", `{"c1":"git","c2":"group-commit","c3":"unstaged-changes","options":{"edition":"bug"}}`, "prompt_execute", tools.InvalidInput,
			map[string]any{"option": "edition"}},
		{"no template", `{"agent":"noopts","c1":"x","c2":"y","c3":"z"}`, "prompt_execute", tools.ExecutionFailed,
			map[string]any{"command": "x y z", "path": ".agent/noopts/prompts/x/y/z/f_default.md"}},
		{"unknown task", `{"c1":"codex","c2":"work","c3":"task","task":"t-0000000000000000"}`, "prompt_execute", tools.ResourceNotFound, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			treeBefore, n := e.tree(), e.commits()
			r := e.call("w1", tt.tool, tt.args)
			if r.OK || r.Error.Code != tt.code {
				t.Fatalf("got %+v, want %s", r, tt.code)
			}
			for k, v := range tt.details {
				got := r.Error.Details[k]
				if b, err := json.Marshal(got); err == nil {
					json.Unmarshal(b, &got)
				}
				if !reflect.DeepEqual(got, v) {
					t.Errorf("details[%s] = %v, want %v (all: %v)", k, got, v, r.Error.Details)
				}
			}
			if e.tree() != treeBefore || e.commits() != n {
				t.Error("the state moved on refusal")
			}
			msg := e.audit(r)
			if !strings.Contains(msg, "Codex-Error: "+string(tt.code)) {
				t.Errorf("audit trailer missing:\n%s", msg)
			}
		})
	}
	// a broken template spoils nothing else: search still serves the rest
	s := decode[prompt.PromptSearchResult](t, e.call("w1", "prompt_search", `{"query":"group changes and commit"}`))
	if s.Results[0].C2 != "group-commit" || len(s.Warnings) != 1 || s.Warnings[0].Path != ".agent/climpt/prompts/bad/front/matter/f_default.md" {
		t.Errorf("search with a broken template: %+v", s)
	}
	// with registry.json malformed, the templates and the built-ins are
	// still served, and the warning names the file and line
	e.writeFile(".agent/climpt/registry.json", "{ not json")
	s = decode[prompt.PromptSearchResult](t, e.call("w1", "prompt_search", `{"query":"review a coder's changes"}`))
	if s.Results[0].C1 != "codex" || len(s.Warnings) != 2 || s.Warnings[1].Path != ".agent/climpt/registry.json" || s.Warnings[1].Line != 1 {
		t.Errorf("built-ins with a malformed registry: %+v", s)
	}
}

func TestPromptReloadSeesChanges(t *testing.T) {
	e := newEnv(t).withClimpt()
	e.reg = e.reg.WithEnv(tools.Env{Prompts: prompts.NewCache()}) // as `git codex mcp` runs it
	r := decode[prompt.PromptReloaded](t, e.call(human, "prompt_reload", `{}`))
	if r.Count != 11 || r.Version != "1.0.0" {
		t.Fatalf("reload = %+v", r)
	}
	// a new template-only command, and a changed template
	e.writeFile(".agent/climpt/prompts/docs/write/changelog/f_default.md", "---\ndescription: Write the changelog entry for a release\n---\nChangelog for {input_text}")
	e.writeFile(".agent/climpt/prompts/git/decide-branch/working-branch/f_default.md", "---\ntitle: t\n---\nNEW {input_text}")
	// with a cache, the catalog (and its index) is kept between calls: a
	// new template shows after a reload (or, under `git codex mcp`, the
	// watcher's)
	if s := decode[prompt.PromptSearchResult](t, e.call(human, "prompt_search", `{"query":"changelog for a release"}`)); len(s.Results) != 0 && s.Results[0].C1 == "docs" {
		t.Errorf("a template added after the load was found before a reload: %+v", s)
	}
	r = decode[prompt.PromptReloaded](t, e.call(human, "prompt_reload", `{}`))
	if r.Count != 12 {
		t.Fatalf("after adding a template: count %d, want 12", r.Count)
	}
	s := decode[prompt.PromptSearchResult](t, e.call(human, "prompt_search", `{"query":"changelog for a release"}`))
	if len(s.Results) == 0 || s.Results[0].C1 != "docs" {
		t.Errorf("search after reload = %+v", s)
	}
	x := decode[prompt.PromptExecuted](t, e.call(human, "prompt_execute", `{"c1":"git","c2":"decide-branch","c3":"working-branch","options":{"input_text":"T"}}`))
	if x.Prompt != "NEW T" {
		t.Errorf("execute after the template changed: %q", x.Prompt)
	}
	// registry.json changing is seen without a reload (one stat per call)
	time.Sleep(10 * time.Millisecond) // a distinct mtime on coarse clocks
	e.writeFile(".agent/climpt/registry.json", `{"version":"2.0.0","tools":{"commands":[{"c1":"only","c2":"one","c3":"left","description":"the last command standing"}]}}`)
	s = decode[prompt.PromptSearchResult](t, e.call(human, "prompt_search", `{"query":"last command standing"}`))
	if len(s.Results) == 0 || s.Results[0].C1 != "only" {
		t.Errorf("search after registry.json changed = %+v", s)
	}
}

func TestPromptToolsAllowedToEveryType(t *testing.T) {
	e := newEnv(t)
	for _, typ := range []string{"supervisor", "orchestrator", "worker", "planning", "coding", "review"} {
		e.ok(human, "agent_register", `{"id":"a-`+typ+`","type":"`+typ+`"}`)
		for tool, args := range map[string]string{
			"prompt_search":   `{"query":"review"}`,
			"prompt_describe": `{"c1":"codex","c2":"review","c3":"changes"}`,
			"prompt_execute":  `{"c1":"codex","c2":"review","c3":"changes"}`,
			"prompt_reload":   `{}`,
		} {
			if r := e.call("a-"+typ, tool, args); !r.OK {
				t.Errorf("%s %s: %+v", typ, tool, r.Error)
			}
		}
	}
}

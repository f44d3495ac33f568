package prompts

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// tree writes the files of testdata/<name>.txtar into a temporary
// directory, plus extra files, and returns the directory.
func tree(t *testing.T, name string, extra map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if name != "" {
		ar, err := txtar.ParseFile(filepath.Join("testdata", name+".txtar"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ar.Files {
			write(t, dir, f.Name, string(f.Data))
		}
	}
	for n, d := range extra {
		write(t, dir, n, d)
	}
	return dir
}

func write(t *testing.T, dir, name, data string) { writeB(t, dir, name, data) }

func writeB(t testing.TB, dir, name, data string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func keys(cat *Catalog) []string {
	var out []string
	for _, c := range cat.Commands() {
		out = append(out, c.Key()+"/"+c.Source)
	}
	return out
}

func TestLoadClimptRegistry(t *testing.T) {
	cat := Load(tree(t, "climpt", nil), DefaultAgent)
	if len(cat.Problems) != 0 {
		t.Fatalf("problems: %v", cat.Problems)
	}
	want := []string{
		"codex address feedback/builtin", "codex review changes/builtin", "codex work task/builtin",
		"git decide-branch working-branch/template", "git find-oldest descendant-branch/registry",
		"git group-commit unstaged-changes/template", "git list-select pr-branch/registry",
		"git merge-up base-branch/registry", "meta build frontmatter/builtin",
		"meta create instruction/template", "test run specific/template",
	}
	if got := keys(cat); !reflect.DeepEqual(got, want) {
		t.Fatalf("commands:\n got %v\nwant %v", got, want)
	}
	if cat.Version != "1.0.0" {
		t.Errorf("version %q", cat.Version)
	}
	gc, _ := cat.Lookup("git", "group-commit", "unstaged-changes")
	if gc.Title != "Group commits by meaning" || !gc.Options.File || gc.Options.Stdin || !gc.Options.Destination ||
		!reflect.DeepEqual(gc.Options.Adaptation, []string{"default", "detailed"}) ||
		!reflect.DeepEqual(gc.Templates, []string{"f_default.md", "f_default_detailed.md"}) {
		t.Errorf("group-commit: %+v", gc)
	}
	// registry.json's entry wins over the front matter; the front matter
	// fills only what it leaves out.
	mc, _ := cat.Lookup("meta", "create", "instruction")
	if mc.Description != "Create new instruction file" || !reflect.DeepEqual(mc.UV, []UserVar{{"name", "The instruction's C3L name"}}) {
		t.Errorf("meta create: %+v", mc)
	}
	// A template registry.json does not list is described by its front matter.
	tr, _ := cat.Lookup("test", "run", "specific")
	if !strings.HasPrefix(tr.Description, "Execute tests for a specific target") || tr.Usage == "" ||
		!reflect.DeepEqual(tr.UV, []UserVar{{"target", "The test target to run (file, function or pattern)"}}) {
		t.Errorf("test run: %+v", tr)
	}
}

func TestLoadProblems(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]string
		agent     string
		wantPath  string
		wantLine  int
		wantCause string
		wantCmds  int // commands still served
	}{
		{
			name:     "no registry at all is quiet for the default agent",
			agent:    DefaultAgent,
			wantCmds: 5,
		},
		{
			name:      "registry missing in an agent folder",
			files:     map[string]string{".agent/climpt/prompts/x/y/z/f_default.md": "---\ndescription: d\n---\nbody"},
			agent:     DefaultAgent,
			wantPath:  ".agent/climpt/registry.json",
			wantCause: "file not found",
			wantCmds:  6,
		},
		{
			name:      "another agent's registry missing",
			agent:     "iterator",
			wantPath:  ".agent/iterator/registry.json",
			wantCause: "file not found",
		},
		{
			name:      "JSON syntax error names the line",
			files:     map[string]string{".agent/climpt/registry.json": "{\n  \"version\": \"1\",\n  \"tools\": {\n    \"commands\": [,]\n  }\n}\n"},
			agent:     DefaultAgent,
			wantPath:  ".agent/climpt/registry.json",
			wantLine:  4,
			wantCause: "JSON syntax error at line 4",
			wantCmds:  5,
		},
		{
			name:      "wrong type names the line",
			files:     map[string]string{".agent/climpt/registry.json": "{\n  \"tools\": {\n    \"commands\": {}\n  }\n}\n"},
			agent:     DefaultAgent,
			wantPath:  ".agent/climpt/registry.json",
			wantLine:  3,
			wantCause: "tools.commands",
			wantCmds:  5,
		},
		{
			name: "a command name that would leave the folder",
			files: map[string]string{".agent/climpt/registry.json": `{"tools":{"commands":[
				{"c1":"..","c2":"x","c3":"y","description":"escape"},
				{"c1":"ok","c2":"x","c3":"y","description":"fine"}]}}`},
			agent:     DefaultAgent,
			wantPath:  ".agent/climpt/registry.json",
			wantCause: "tools.commands[0] left out",
			wantCmds:  6,
		},
		{
			name: "broken front matter",
			files: map[string]string{
				".agent/climpt/registry.json":                 `{"tools":{"commands":[]}}`,
				".agent/climpt/prompts/a/b/c/f_default.md":    "---\ntitle: [unclosed\n---\nbody",
				".agent/climpt/prompts/a/b/good/f_default.md": "---\ndescription: good\n---\nbody",
			},
			agent:     DefaultAgent,
			wantPath:  ".agent/climpt/prompts/a/b/c/f_default.md",
			wantLine:  2,
			wantCause: "front matter",
			wantCmds:  6,
		},
		{
			name: "unclosed front matter",
			files: map[string]string{
				".agent/climpt/registry.json":              `{"tools":{"commands":[]}}`,
				".agent/climpt/prompts/a/b/c/f_default.md": "---\ntitle: x\nbody",
			},
			agent:     DefaultAgent,
			wantPath:  ".agent/climpt/prompts/a/b/c/f_default.md",
			wantLine:  1,
			wantCause: "never closed",
			wantCmds:  5,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat := Load(tree(t, "", tt.files), tt.agent)
			if len(cat.Commands()) != tt.wantCmds {
				t.Errorf("%d commands served, want %d: %v", len(cat.Commands()), tt.wantCmds, keys(cat))
			}
			if tt.wantPath == "" {
				if len(cat.Problems) != 0 {
					t.Fatalf("problems %v, want none", cat.Problems)
				}
				return
			}
			if len(cat.Problems) != 1 {
				t.Fatalf("problems %v, want one", cat.Problems)
			}
			p := cat.Problems[0]
			if p.Path != tt.wantPath || p.Line != tt.wantLine || !strings.Contains(p.Cause, tt.wantCause) {
				t.Errorf("problem %+v, want %s line %d cause containing %q", p, tt.wantPath, tt.wantLine, tt.wantCause)
			}
		})
	}
}

func TestLoadBrokenTemplateIsReported(t *testing.T) {
	cat := Load(tree(t, "", map[string]string{
		".agent/climpt/registry.json":              `{"tools":{"commands":[]}}`,
		".agent/climpt/prompts/a/b/c/f_default.md": "---\noptions: [\n---\nbody",
	}), DefaultAgent)
	if _, ok := cat.Lookup("a", "b", "c"); ok {
		t.Fatal("a template with a broken front matter is listed")
	}
	p, ok := cat.Broken("a", "b", "c")
	if !ok || p.Path != ".agent/climpt/prompts/a/b/c/f_default.md" {
		t.Fatalf("broken = %+v, %v", p, ok)
	}
}

func TestLoadRefusesSymlinksOutOfTheFolder(t *testing.T) {
	outside := t.TempDir()
	write(t, outside, "secret/x/y/f_default.md", "---\ndescription: outside\n---\nsecret")
	write(t, outside, "f_default.md", "---\ndescription: outside file\n---\nsecret")
	dir := tree(t, "", map[string]string{
		".agent/climpt/registry.json":                   `{"tools":{"commands":[]}}`,
		".agent/climpt/prompts/in/side/ok/f_default.md": "---\ndescription: inside\n---\nfine",
	})
	prompts := filepath.Join(dir, ".agent/climpt/prompts")
	must(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(prompts, "evil")))
	must(t, os.MkdirAll(filepath.Join(prompts, "a/b/c"), 0o755))
	must(t, os.Symlink(filepath.Join(outside, "f_default.md"), filepath.Join(prompts, "a/b/c/f_default.md")))
	// a symlink that stays inside is followed
	must(t, os.Symlink(filepath.Join(prompts, "in"), filepath.Join(prompts, "alias")))
	cat := Load(dir, DefaultAgent)
	var got []string
	for _, c := range cat.Commands() {
		if c.Source == SourceTemplate {
			got = append(got, c.Key())
		}
	}
	if want := []string{"alias side ok", "in side ok"}; !reflect.DeepEqual(got, want) {
		t.Errorf("templates served %v, want %v", got, want)
	}
	var paths []string
	for _, p := range cat.Problems {
		if !strings.Contains(p.Cause, "outside the prompts folder") {
			t.Errorf("problem %v", p)
		}
		paths = append(paths, p.Path)
	}
	if want := []string{".agent/climpt/prompts/a/b/c/f_default.md", ".agent/climpt/prompts/evil"}; !reflect.DeepEqual(paths, want) {
		t.Errorf("problems at %v, want %v", paths, want)
	}
}

func TestBuiltinOverride(t *testing.T) {
	cat := Load(tree(t, "", map[string]string{
		".agent/climpt/prompts/codex/work/task/f_default.md": "---\ndescription: our own work prompt\n---\nDo {codex_task_title} our way.",
	}), DefaultAgent)
	c, ok := cat.Lookup("codex", "work", "task")
	if !ok || c.Source != SourceTemplate || c.Description != "our own work prompt" {
		t.Fatalf("codex work task = %+v", c)
	}
	r, err := cat.Execute(c, nil, map[string]string{"codex_task_title": "T"})
	if err != nil || r.Prompt != "Do T our way." || r.Template != ".agent/climpt/prompts/codex/work/task/f_default.md" {
		t.Fatalf("execute = %+v, %v", r, err)
	}
	// other agents get no built-ins
	other := Load(tree(t, "", map[string]string{".agent/iterator/registry.json": `{"tools":{"commands":[]}}`}), "iterator")
	if len(other.Commands()) != 0 {
		t.Errorf("agent iterator serves %v", keys(other))
	}
}

func TestBuiltinsLoadClean(t *testing.T) {
	for key, td := range builtinDirs() {
		if td.err != nil {
			t.Errorf("%s: %v", key, td.err)
		}
		if td.fm.Description == "" || td.fm.C1+" "+td.fm.C2+" "+td.fm.C3 != key {
			t.Errorf("%s: front matter %+v", key, td.fm)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

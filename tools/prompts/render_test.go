package prompts

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestExecuteChoosesLikeClimpt(t *testing.T) {
	files := map[string]string{".agent/climpt/registry.json": `{"tools":{"commands":[{"c1":"code","c2":"review","c3":"pr","description":"review a pull request",
		"options":{"edition":["default","bug"],"adaptation":["default","detailed","strict"],"stdin":true}}]}}`}
	for _, n := range []string{"f_default.md", "f_bug.md", "f_default_detailed.md", "f_bug_detailed.md"} {
		files[".agent/climpt/prompts/code/review/pr/"+n] = n
	}
	cat := Load(tree(t, "", files), DefaultAgent)
	cmd, _ := cat.Lookup("code", "review", "pr")
	tests := []struct{ edition, adaptation, want string }{
		{"", "", "f_default.md"},
		{"bug", "", "f_bug.md"},
		{"bug", "detailed", "f_bug_detailed.md"},
		{"default", "detailed", "f_default_detailed.md"},
		{"bug", "strict", "f_bug.md"},         // no f_bug_strict.md: the edition's
		{"default", "strict", "f_default.md"}, // last resort
	}
	for _, tt := range tests {
		r, err := cat.Execute(cmd, map[string]string{"edition": tt.edition, "adaptation": tt.adaptation}, nil)
		if err != nil || r.Prompt != tt.want {
			t.Errorf("edition %q adaptation %q: %q, %v; want %s", tt.edition, tt.adaptation, r.Prompt, err, tt.want)
		}
	}
	var oe *OptionError
	if _, err := cat.Execute(cmd, map[string]string{"edition": "feature"}, nil); !errors.As(err, &oe) || oe.Option != "edition" {
		t.Errorf("undeclared edition: %v", err)
	}
	if _, err := cat.Execute(cmd, map[string]string{"adaptation": "lenient"}, nil); !errors.As(err, &oe) || oe.Option != "adaptation" {
		t.Errorf("undeclared adaptation: %v", err)
	}
}

func TestSubstitute(t *testing.T) {
	vars := map[string]string{"input_text": "{uv-x} stays", "uv-x": "X", "empty": ""}
	got := substitute("a {input_text} b {uv-x} {unknown} {empty}{ {} {not closed", vars)
	if want := "a {uv-x} stays b X {unknown} { {} {not closed"; got != want {
		t.Errorf("substitute = %q, want %q", got, want)
	}
}

func TestExecuteRefusesTemplatesLeadingOut(t *testing.T) {
	dir := tree(t, "", map[string]string{".agent/climpt/prompts/a/b/c/f_default.md": "inside"})
	cat := Load(dir, DefaultAgent)
	cmd, ok := cat.Lookup("a", "b", "c")
	if !ok {
		t.Fatal("a b c not loaded")
	}
	// after the load, the file is swapped for a symlink to a file outside
	outside := filepath.Join(t.TempDir(), "secret.md")
	must(t, os.WriteFile(outside, []byte("secret"), 0o644))
	p := filepath.Join(dir, ".agent/climpt/prompts/a/b/c/f_default.md")
	must(t, os.Remove(p))
	must(t, os.Symlink(outside, p))
	var ee *ExecError
	if _, err := cat.Execute(cmd, nil, nil); !errors.As(err, &ee) || ee.Path != ".agent/climpt/prompts/a/b/c/f_default.md" {
		t.Fatalf("execute through a symlink out: %v", err)
	}
}

func TestExecuteBrokenTemplateOfAListedCommand(t *testing.T) {
	cat := Load(tree(t, "", map[string]string{
		".agent/climpt/registry.json":                       `{"tools":{"commands":[{"c1":"a","c2":"b","c3":"c","description":"listed"}]}}`,
		".agent/climpt/prompts/a/b/c/f_default.md":          "---\ntitle: ok\n---\nfine",
		".agent/climpt/prompts/a/b/c/f_default_detailed.md": "---\ntitle: [\n---\nbroken",
	}), DefaultAgent)
	cmd, _ := cat.Lookup("a", "b", "c")
	var ee *ExecError
	if _, err := cat.Execute(cmd, map[string]string{"adaptation": "detailed"}, nil); !errors.As(err, &ee) || ee.Path != ".agent/climpt/prompts/a/b/c/f_default_detailed.md" {
		t.Fatalf("broken template: %v", err)
	}
	if r, err := cat.Execute(cmd, nil, nil); err != nil || r.Prompt != "fine" {
		t.Fatalf("the good one: %q, %v", r.Prompt, err)
	}
}

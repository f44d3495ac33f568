package tools

import (
	"go/build"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/gitcodex/git-codex/"

// layers are the packages under tools/, lowest first (issue 26): a package
// may import only packages of a lower layer, never one of its own layer or
// above, so the compiler keeps the nouns one way. The libraries below the
// framework (prompts, modelapi) know nothing of it; the framework knows no
// noun; each noun knows only the nouns below it; builtin assembles them
// all. A noun peeled from work takes its place here (mail < decision
// (which uses mail's text limits), prompt (which reads tasks through a
// reader the assembly hands it) < lock (whose records carry the cycles)
// < cycle (which serves lock_acquire {session_token} through a function
// the assembly hands lock) < instance < delegate, review < forge (the
// GitHub calls, which record a pull request on its task through a
// function work hands them) < work; nouns of one layer do not import each
// other).
var layers = [][]string{
	{"tools/prompts", "tools/modelapi", "tools/internal/agentclitest"},
	{"tools"},
	{"tools/mail"},
	{"tools/decision", "tools/prompt"},
	{"tools/lock"},
	{"tools/cycle"},
	{"tools/instance"},
	{"tools/delegate", "tools/review"},
	{"tools/forge"},
	{"tools/work"},
	{"tools/builtin"},
}

// TestLayers reads the imports of every package under tools/ (tests
// included, but not external tests, which may import the assembly) and
// fails on one that imports a package of its own layer or above, or on a
// package that has no layer.
func TestLayers(t *testing.T) {
	rank := map[string]int{}
	for i, layer := range layers {
		for _, p := range layer {
			rank[p] = i
		}
	}
	seen := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if _, none := err.(*build.NoGoError); none {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.ToSlash(filepath.Join("tools", path))
		seen[name] = true
		r, ok := rank[name]
		if !ok {
			t.Errorf("%s is in no layer; give it its place in layers", name)
			return nil
		}
		for _, imp := range append(pkg.Imports, pkg.TestImports...) {
			dep, ours := strings.CutPrefix(imp, module)
			if !ours || (dep != "tools" && !strings.HasPrefix(dep, "tools/")) {
				continue
			}
			if d, ok := rank[dep]; !ok || d >= r {
				t.Errorf("%s imports %s, which is not below it", name, dep)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range rank {
		if !seen[p] {
			t.Errorf("layers lists %s, which is no package", p)
		}
	}
}

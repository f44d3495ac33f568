package builtin_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/tools/builtin"
)

// TestToolFiles: every tool git codex ships is defined (tools.Define) in
// a file named after it, <name>.go, in its package (the way gh names
// pkg/cmd/<noun>/<verb>; issue 26), so a tool is found by its name and a
// noun's shared code stays in files named after what they hold.
func TestToolFiles(t *testing.T) {
	defined := map[string]string{} // tool name -> the file that defines it
	files, err := filepath.Glob("../*.go")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("../*/*.go")
	fset := token.NewFileSet()
	for _, path := range append(files, more...) {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			var fn string
			switch x := call.Fun.(type) {
			case *ast.Ident:
				fn = x.Name
			case *ast.SelectorExpr:
				fn = x.Sel.Name
			}
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && fn == "Define" && lit.Kind == token.STRING {
				name, _ := strconv.Unquote(lit.Value)
				defined[name] = path
			}
			return true
		})
	}
	for _, tool := range builtin.Registry().All() {
		file, ok := defined[tool.Name]
		if !ok {
			t.Errorf("found no tools.Define of %s", tool.Name)
			continue
		}
		if filepath.Base(file) != tool.Name+".go" {
			t.Errorf("tool %s is defined in %s, not in a file named after it: move it to %s.go beside it", tool.Name, file, tool.Name)
		}
	}
}

package builtin_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/tools/builtin"
)

// notYetInOwnFile are the tools still defined in a file shared with
// others (their noun's), in the packages not yet split one file per tool
// (issue 26): the list only shrinks. A new tool goes in a file named
// after it.
var notYetInOwnFile = []string{
	"create_issues", "github_retry",
}

// TestToolFiles: every tool git codex ships is defined (tools.Define) in
// a file named after it, <name>.go, in its package, but those listed in
// notYetInOwnFile; and the list names no tool that already has its file.
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
	var missing []string
	for _, tool := range builtin.Registry().All() {
		file, ok := defined[tool.Name]
		if !ok {
			t.Errorf("found no tools.Define of %s", tool.Name)
			continue
		}
		own := filepath.Base(file) == tool.Name+".go"
		listed := slices.Contains(notYetInOwnFile, tool.Name)
		switch {
		case own && listed:
			t.Errorf("%s is in its own file %s: take it off notYetInOwnFile", tool.Name, file)
		case !own && !listed:
			missing = append(missing, tool.Name+" ("+file+")")
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("tool %s is not defined in a file named after it", m)
	}
}

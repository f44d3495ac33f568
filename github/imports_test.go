package github

import (
	"go/build"
	"strings"
	"testing"
)

// TestImportsNoNoun: the REST client implements the framework's forge
// interfaces (tools.GitHub, tools.GitHubReviews) and knows no noun
// package; the nouns reach it only through the Env the CLI wires.
func TestImportsNoNoun(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range append(pkg.Imports, pkg.TestImports...) {
		if strings.HasPrefix(imp, "github.com/gitcodex/git-codex/tools/") && imp != "github.com/gitcodex/git-codex/tools/prompts" {
			t.Errorf("package github imports %s; it may import the framework (tools) only", imp)
		}
	}
}

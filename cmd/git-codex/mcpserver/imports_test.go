package mcpserver

import (
	"go/build"
	"slices"
	"testing"
)

// TestServerImportsNoAdapter keeps the line between the server and the
// command that runs it (issue 26): the server is handed its registry,
// store, caller and streams, so its own files import neither the CLI
// framework nor the assembly of tools, nor GitHub's client (the CLI wires
// that into the registry's Env), nor the process's signals (the command
// owns the process).
func TestServerImportsNoAdapter(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, banned := range []string{
		"github.com/urfave/cli/v2",
		"github.com/gitcodex/git-codex/cmd/git-codex/app",
		"github.com/gitcodex/git-codex/tools/builtin",
		"github.com/gitcodex/git-codex/github",
		"github.com/gitcodex/git-codex/ui",
		"github.com/gitcodex/git-codex/demo",
		"os/signal",
	} {
		if slices.Contains(pkg.Imports, banned) {
			t.Errorf("package mcpserver imports %s; that belongs to its adapter, cmd/git-codex/app/mcpcmd.go", banned)
		}
	}
	if len(pkg.Imports) == 0 {
		t.Fatal("read no imports: the test reads the wrong directory")
	}
}

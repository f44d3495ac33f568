//go:build !urfave_cli_no_docs

package app

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/tools"
)

// TestManPageIsCurrent keeps docs/git-codex.1, the man page `make install`
// puts where man (and so `git codex --help`, which git answers with `man
// git-codex`) finds it, equal to what the command tree generates. The
// generator is urfave/cli's, which the shipped binary leaves out (built
// with -tags urfave_cli_no_docs), so the page is generated here and
// committed. Regenerate with: UPDATE_DOCS=1 go test ./cmd/git-codex/app -run TestManPage
func TestManPageIsCurrent(t *testing.T) {
	const path = "../../../docs/git-codex.1"
	var out bytes.Buffer
	e := &env{stdout: &out, stderr: &out, dir: t.TempDir(), getenv: os.Getenv, reg: tools.Builtin(), width: 80}
	want, err := e.app().ToManWithSection(1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(want, "\n.SS send\n") || !strings.Contains(want, "body-file") {
		t.Fatalf("the man page lacks the tool commands:\n%s", want)
	}
	if os.Getenv("UPDATE_DOCS") != "" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("docs/git-codex.1 is stale; regenerate with: UPDATE_DOCS=1 go test ./cmd/git-codex/app -run TestManPage")
	}
}

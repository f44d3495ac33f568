package app

import (
	"os"
	"testing"

	"github.com/gitcodex/git-codex/tools/builtin"
)

// TestToolsDocIsCurrent keeps docs/TOOLS.md equal to what the registry
// generates. Regenerate with: UPDATE_DOCS=1 go test ./cmd/git-codex/app -run TestToolsDoc
func TestToolsDocIsCurrent(t *testing.T) {
	const path = "../../../docs/TOOLS.md"
	want := toolsMarkdown(builtin.Registry())
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
		t.Fatalf("docs/TOOLS.md is stale; regenerate with: UPDATE_DOCS=1 go test ./cmd/git-codex/app -run TestToolsDoc")
	}
}

package instance

import (
	"os"
	"strings"
	"testing"
)

// docs/DELEGATION.md's table of launch lines says what the code runs: each
// built-in launcher's spawn line (its command and wiring, with the doc's
// placeholders) appears in it as the code builds it (the headless
// contracts' lines: TestDelegationDocLaunchLines in tools/delegate).
func TestDelegationDocSpawnLines(t *testing.T) {
	b, err := os.ReadFile("../../docs/DELEGATION.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for name, l := range BuiltinLaunchers() {
		line := l.Command + " " + strings.Join(l.wire("<worktree>/.git-codex/mcp.json", "<id>"), " ")
		for k, v := range l.env {
			line = k + "=" + v + " " + line
		}
		if l.promptFlag != "" {
			line += " " + l.promptFlag + `="<prompt>"`
		} else {
			line += ` "<prompt>"`
		}
		if !strings.Contains(doc, "| spawn"+map[bool]string{true: " (interactive, in the pane)", false: ""}[name == "claude"]+" | `"+line+"`") {
			t.Errorf("docs/DELEGATION.md has no spawn line for %s as the code builds it:\n%s", name, line)
		}
	}
}

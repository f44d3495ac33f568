package work

import (
	"os"
	"strings"
	"testing"
)

// docs/DELEGATION.md's table of launch lines says what the code runs: each
// built-in launcher's spawn line (its command and wiring, with the doc's
// placeholders) and each headless contract's leading flags (with a turn
// of the defaults) appear in it as the code builds them.
func TestDelegationDocLaunchLines(t *testing.T) {
	b, err := os.ReadFile("../../docs/DELEGATION.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for name, l := range builtinLaunchers() {
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
	for name, h := range headlessContracts() {
		args, err := h.args(turnSpec{PermissionMode: "auto", MaxTurns: 30})
		if err != nil {
			t.Fatal(err)
		}
		lead := name + " " + strings.Join(args[:3], " ")
		if !strings.Contains(doc, "| delegate | `"+lead) {
			t.Errorf("docs/DELEGATION.md has no delegate line for %s starting %q", name, lead)
		}
	}
}

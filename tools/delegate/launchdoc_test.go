package delegate

import (
	"os"
	"strings"
	"testing"
)

// docs/DELEGATION.md's table of launch lines says what the code runs: each
// headless contract's leading flags (with a turn of the defaults) appear
// in it as the code builds them (the spawn lines:
// TestDelegationDocSpawnLines in tools/instance).
func TestDelegationDocLaunchLines(t *testing.T) {
	b, err := os.ReadFile("../../docs/DELEGATION.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
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

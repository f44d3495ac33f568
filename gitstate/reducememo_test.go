package gitstate

import (
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestReduceMemoHoldsTwoPartsADirectory: a long-lived process that sees a
// directory change many times (an MCP server's inbox polls) holds its last
// two parts, not one per tree it ever read.
func TestReduceMemoHoldsTwoPartsADirectory(t *testing.T) {
	var m reduceMemo
	tree := func(i int) plumbing.Hash {
		return plumbing.NewHash(string(rune('a'+i%6)) + "000000000000000000000000000000000000000"[:39])
	}
	for i := 0; i < 6; i++ {
		m.put("inbox", "mail/w00", tree(i), i)
		m.put("inbox", "mail/w00/x", tree(i), i)
	}
	if len(m.slots) != 2 {
		t.Fatalf("%d slots for two directories", len(m.slots))
	}
	for i := 0; i < 6; i++ {
		v, ok := m.get("inbox", "mail/w00", tree(i))
		if want := i >= 4; ok != want || ok && v != i {
			t.Errorf("tree %d: %v %v, want held %v", i, v, ok, want)
		}
	}
	if _, ok := m.get("other", "mail/w00", tree(5)); ok {
		t.Error("another reduction's part was given")
	}
	if _, ok := m.get("inbox", "mail/w01", tree(5)); ok {
		t.Error("another directory's part was given")
	}
}

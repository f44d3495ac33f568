package app

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"

	"github.com/cli/go-gh/v2/pkg/tableprinter"
)

// TestTableMatchesGh prints random tables with our printer and with go-gh's
// tableprinter (which it replaced, to keep a terminal UI library out of the
// binary), on a terminal of many widths and piped: the output must be the
// same byte for byte.
func TestTableMatchesGh(t *testing.T) {
	words := []string{"", "a", "alice", "m-01jz8q3v", "worker", "Fix the flaky review loop", "just now",
		"2026-11-24T03:00:00Z", "yes", "no", "日本語の件名", "héllo wörld", "a\tb", "x" + strings.Repeat("y", 70)}
	rng := rand.New(rand.NewSource(7))
	for round := 0; round < 3000; round++ {
		cols := 1 + rng.Intn(6)
		rows := rng.Intn(5)
		width := rng.Intn(140)
		tty := rng.Intn(4) != 0
		headers := make([]string, cols)
		for i := range headers {
			headers[i] = strings.ToUpper(words[rng.Intn(len(words))])
		}
		var ours, theirs bytes.Buffer
		a := newTable(&ours, tty, width, headers...)
		b := tableprinter.New(&theirs, tty, width)
		b.AddHeader(headers)
		paint := func(s string) string { return "<" + s + ">" }
		for r := 0; r < rows; r++ {
			for c := 0; c < cols; c++ {
				w := words[rng.Intn(len(words))]
				if rng.Intn(5) == 0 {
					a.AddColored(w, paint)
					b.AddField(w, tableprinter.WithColor(paint))
				} else {
					a.AddField(w)
					b.AddField(w)
				}
			}
			a.EndRow()
			b.EndRow()
		}
		if err := a.Render(); err != nil {
			t.Fatal(err)
		}
		if err := b.Render(); err != nil {
			t.Fatal(err)
		}
		if ours.String() != theirs.String() {
			t.Fatalf("round %d (tty %v, width %d): ours\n%q\ngh's\n%q", round, tty, width, ours.String(), theirs.String())
		}
	}
}

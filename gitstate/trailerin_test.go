package gitstate

import (
	"strings"
	"testing"
)

// TestTrailerInReadsTheFirstLine: trailerIn answers as reading the
// message line by line does: the value of the first line that starts with
// "key: ", wherever it is, or "".
func TestTrailerInReadsTheFirstLine(t *testing.T) {
	byLines := func(msg, key string) string {
		for _, line := range strings.Split(msg, "\n") {
			if v, ok := strings.CutPrefix(line, key+": "); ok {
				return v
			}
		}
		return ""
	}
	msgs := []string{
		"", "\n", "Codex-Read-At: abc", "sum\n\nCodex-Read-At: abc\n", "sum\n\nCodex-Read-At: \n",
		"sum\n\nCodex-Read-At:abc\nCodex-Read-At: def\n", "Codex-Read-Atx: no\nCodex-Read-At: yes",
		"sum\n\nCodex-Tool: t\nCodex-Read-At: one\nCodex-Read-At: two", "sum\n\nCodex-Read-At", "sum\n\nCodex-Read-At:",
		" Codex-Read-At: indented\n", "sum\r\n\r\nCodex-Read-At: crlf\r\n", "Codex-Folded: 3\n\nCodex-Folded-Until: x",
	}
	for _, msg := range msgs {
		for _, key := range []string{TrailerReadAt, TrailerFolded, "Codex-Tool", ""} {
			if got, want := trailerIn(msg, key), byLines(msg, key); got != want {
				t.Errorf("trailerIn(%q, %q) = %q, want %q", msg, key, got, want)
			}
		}
	}
}

package instance

import "testing"

// The input lines of the built-in CLIs as captured from the pinned
// binaries against tools/modelapi (idle and during a turn), and the lines
// that look like them but are not: the transcript's echo of a message, a
// menu's chosen option, a settings panel's.
func TestAtInput(t *testing.T) {
	const rule = "────────────────────────────────────────────────────────────────"
	for _, c := range []struct {
		cli, above, line string
		ok               bool
	}{
		{"claude", rule, "❯ ", true},
		{"claude", rule, "❯ half typed", true},
		{"claude", "✻ Baked for 1s · done 5:49 PM", "❯ Now wait, pcl.", false}, // the transcript
		{"claude", "", "❯ /config", false},
		{"claude", "  ↑/↓ to navigate", "❯ Auto-compact                                on", false}, // /config's chosen setting
		{"claude", rule, "❯ 1. Yes, I trust this folder", false},
		{"claude", rule, "  │ ⌕ Search settings…", false},
		{"codex", "", "› Ask Codex to do anything", true},
		{"codex", "", "› Now wait, pcx.", false}, // the transcript
		{"codex", "", "› 1. Trust and continue", false},
		{"codex", "", "", false},
		{"gemini", " Shift+Tab to accept edits", " >   Type your message or @path/to/file", true},
		{"gemini", "", " > Now wait, pgm.", false}, // the transcript
		{"gemini", "", "", false},
	} {
		known, ok := atInput(c.cli, c.above, c.line)
		if !known || ok != c.ok {
			t.Errorf("atInput(%s, %q, %q) = %v, %v; want true, %v", c.cli, c.above, c.line, known, ok, c.ok)
		}
	}
	if known, _ := atInput("mine", "", "$ "); known {
		t.Error("a launcher of the person's own has a known input line")
	}
}

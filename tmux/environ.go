package tmux

import (
	"fmt"
	"slices"
	"strings"
)

// A session's environment never goes on a command line: a process's argv
// is readable by every user of the machine (/proc/<pid>/cmdline), and a
// tmux server keeps the argv of the client that started it for as long as
// it runs. So NewSession feeds it to tmux on the client's standard input,
// as set-environment commands read by `source-file -`, before the pane's
// command is started (respawned) with it; tmux passes it to the pane
// through its environment only.

// envScript is the tmux commands that set env in session name: one
// set-environment line per variable, sorted by key so that what tmux
// reads is deterministic.
func envScript(name string, env map[string]string) (string, error) {
	keys := make([]string, 0, len(env))
	for k := range env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return "", fmt.Errorf("invalid environment variable name %q", k)
		}
		if strings.ContainsRune(env[k], 0) {
			return "", fmt.Errorf("environment variable %s holds a NUL byte", k)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "set-environment -t %s -- %s %s\n", quoteWord("="+name), quoteWord(k), quoteWord(env[k]))
	}
	return b.String(), nil
}

// quoteWord makes s one literal word of tmux's command language: in double
// quotes, with every character tmux would expand or end the word at
// escaped (\\, \", \$, \~), and control characters and bytes past
// ASCII as octal escapes: a newline kept as is would have the next line's
// leading blanks dropped, and a raw 0xff ends tmux's reading of the word.
func quoteWord(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' || c == '"' || c == '$' || c == '~':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

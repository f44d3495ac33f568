package app

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/tools/builtin"
)

// ttyRun runs the app as on a terminal (which a test cannot have): stdout
// is a buffer the env treats as a TTY, with the given environment.
func ttyRun(t *testing.T, dir string, environ map[string]string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, dir: dir, reg: builtin.Registry(), width: 200,
		tty: true, getenv: func(k string) string { return environ[k] }}
	e.color = colorEnabled(e.tty)
	app := e.app()
	err := app.Run(permuteArgs(app, append([]string{"git-codex"}, args...)))
	return out.String(), errb.String(), err
}

func TestPagerOnTerminal(t *testing.T) {
	dir := mcpRepo(t)
	t.Setenv("NO_COLOR", "1")
	tests := []struct {
		name    string
		environ map[string]string
		args    []string
		paged   bool
	}{
		{"GIT_PAGER", map[string]string{"GIT_PAGER": "sed 's/^/paged: /'", "PAGER": "false"}, []string{"log"}, true},
		{"PAGER", map[string]string{"PAGER": "sed 's/^/paged: /'"}, []string{"show", "refs/codex/state"}, true},
		{"tools", map[string]string{"PAGER": "sed 's/^/paged: /'"}, []string{"tools"}, true},
		{"--no-pager", map[string]string{"PAGER": "sed 's/^/paged: /'"}, []string{"--no-pager", "log"}, false},
		{"cat", map[string]string{"GIT_PAGER": "cat", "PAGER": "sed 's/^/paged: /'"}, []string{"log"}, false},
		{"not a long view", map[string]string{"PAGER": "sed 's/^/paged: /'"}, []string{"agent", "list"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := ttyRun(t, dir, tt.environ, tt.args...)
			if err != nil {
				t.Fatalf("%v: %v\n%s", tt.args, err, errOut)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			for _, l := range lines {
				if strings.HasPrefix(l, "paged: ") != tt.paged {
					t.Fatalf("paged=%v wanted, got line %q in:\n%s", tt.paged, l, out)
				}
			}
			if len(lines) < 2 {
				t.Fatalf("too little output:\n%s", out)
			}
		})
	}
	// a pager that cannot start: the output comes unpaged
	out, _, err := ttyRun(t, dir, map[string]string{"PAGER": "/nonexistent/pager"}, "log")
	if err != nil || !strings.Contains(out, "agent_register") {
		t.Fatalf("log with a missing pager: %v\n%s", err, out)
	}
}

func TestColorOnTerminal(t *testing.T) {
	dir := mcpRepo(t)
	none := map[string]string{"GIT_PAGER": "cat"}
	t.Setenv("NO_COLOR", "")
	t.Setenv("CLICOLOR", "")
	t.Setenv("CLICOLOR_FORCE", "")
	out, _, err := ttyRun(t, dir, none, "log")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, ansiGreen+"change"+ansiReset) || !strings.Contains(out, ansiYellow) {
		t.Fatalf("no colour on a terminal:\n%q", out)
	}
	out, _, _ = ttyRun(t, dir, none, "show", "refs/codex/state")
	if !strings.Contains(out, ansiYellow+"commit ") {
		t.Fatalf("show has no coloured commit line:\n%q", out)
	}
	t.Setenv("NO_COLOR", "1")
	out, _, _ = ttyRun(t, dir, none, "log")
	if strings.Contains(out, "\x1b[") {
		t.Fatalf("colour despite NO_COLOR:\n%q", out)
	}
	if colorEnabled(false) {
		t.Fatal("colour when piped")
	}
}

// TestLogFitsANarrowTerminal: on an 80-column terminal the log's summary
// is readable (it was cut to 11 columns beside the tool and actor, which
// the summary names anyway); a wide terminal and a pipe keep every column.
func TestLogFitsANarrowTerminal(t *testing.T) {
	dir := mcpRepo(t)
	t.Setenv("NO_COLOR", "1")
	run := func(width int) string {
		var out, errb bytes.Buffer
		e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, dir: dir, reg: builtin.Registry(), width: width,
			tty: true, getenv: func(k string) string { return map[string]string{"GIT_PAGER": "cat"}[k] }}
		app := e.app()
		if err := app.Run(permuteArgs(app, []string{"git-codex", "log"})); err != nil {
			t.Fatalf("log: %v\n%s", err, errb.String())
		}
		return out.String()
	}
	narrow := run(80)
	lines := strings.Split(strings.TrimSuffix(narrow, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "COMMIT") || strings.Contains(lines[0], "ACTOR") || !strings.Contains(lines[0], "SUMMARY") {
		t.Fatalf("80 columns: header %q", lines[0])
	}
	summary := strings.Index(lines[0], "SUMMARY")
	for _, l := range lines {
		if w := displayWidth(l); w > 80 {
			t.Errorf("80 columns: a line of %d: %q", w, l)
		}
		if 80-summary < 40 {
			t.Errorf("80 columns: the summary starts at column %d: %q", summary, l)
		}
	}
	if !strings.Contains(narrow, "agent_register: human:test@example.com regist") {
		t.Errorf("80 columns: summaries cut short:\n%s", narrow)
	}
	if wide := run(200); !strings.Contains(strings.SplitN(wide, "\n", 2)[0], "ACTOR") {
		t.Errorf("200 columns: no ACTOR column:\n%s", wide)
	}
}

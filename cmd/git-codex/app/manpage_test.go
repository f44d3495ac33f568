//go:build !urfave_cli_no_docs

package app

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/gitcodex/git-codex/tools/builtin"
)

// TestManPageIsCurrent keeps docs/git-codex.1, the man page `make install`
// puts where man (and so `git codex --help`, which git answers with `man
// git-codex`) finds it, equal to what the command tree generates. The
// generator is urfave/cli's, which the shipped binary leaves out (built
// with -tags urfave_cli_no_docs), so the page is generated here and
// committed. Regenerate with: UPDATE_DOCS=1 go test ./cmd/git-codex/app -run TestManPage
func TestManPageIsCurrent(t *testing.T) {
	const path = "../../../docs/git-codex.1"
	var out bytes.Buffer
	e := &env{stdout: &out, stderr: &out, dir: t.TempDir(), getenv: os.Getenv, reg: builtin.Registry(), width: 80}
	want, err := manPage(e.app())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(want, "\n.SS send\n") || !strings.Contains(want, "body-file") {
		t.Fatalf("the man page lacks the tool commands:\n%s", want)
	}
	// the synopsis is a person's, not urfave/cli's [--as]=[value]
	synopsis := `\fBgit codex\fP [\fB--as\fP \fIID\fP] [\fB--token\fP \fITOKEN\fP] [\fB--no-pager\fP] \fIcommand\fP [\fIcommand options\fP] [\fIarguments...\fP]`
	if !strings.Contains(want, ".SH SYNOPSIS\n"+synopsis+"\n") || strings.Contains(want, "]=[") {
		t.Fatalf("the man page's synopsis is not %q:\n%s", synopsis, want[:min(len(want), 600)])
	}
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
		t.Fatalf("docs/git-codex.1 is stale; regenerate with: UPDATE_DOCS=1 go test ./cmd/git-codex/app -run TestManPage")
	}
}

// manPage is urfave/cli's man page with a synopsis as man pages write
// one: urfave/cli lists the global flags as "[--as]=[value]", one a line.
func manPage(app *cli.App) (string, error) {
	const from = "{{ .App.Name }}\n{{ if .SynopsisArgs }}\n```\n{{ range $v := .SynopsisArgs }}{{ $v }}{{ end }}```\n{{ end }}"
	saved := cli.MarkdownDocTemplate
	defer func() { cli.MarkdownDocTemplate = saved }()
	if !strings.Contains(saved, from) {
		return "", fmt.Errorf("urfave/cli's man page template has changed: teach manPage its synopsis")
	}
	var b strings.Builder
	b.WriteString("**git codex**")
	for _, f := range app.VisibleFlags() {
		name := f.Names()[0]
		if name == "help" || name == "h" {
			continue
		}
		fmt.Fprintf(&b, " [**--%s**", name)
		if v, ok := f.(cli.DocGenerationFlag); ok && v.TakesValue() {
			placeholder := "value" // the usage's `NAME`, as -h shows it
			if _, rest, ok := strings.Cut(v.GetUsage(), "`"); ok {
				if name, _, ok := strings.Cut(rest, "`"); ok {
					placeholder = name
				}
			}
			fmt.Fprintf(&b, " *%s*", placeholder)
		}
		b.WriteString("]")
	}
	b.WriteString(" *command* [*command options*] [*arguments...*]\n")
	cli.MarkdownDocTemplate = strings.Replace(saved, from, b.String(), 1)
	return app.ToManWithSection(1)
}

package app

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/delegate"
)

// delegateExportOptions are `git codex delegate export`'s parsed flags.
type delegateExportOptions struct {
	Session string
	Output  string
}

// delegateExportCommand writes a delegated session's trajectory (its
// record and the agent CLI's messages) to a file, which agent_resume
// takes back (seed 002's trajectory export).
func (e *env) delegateExportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write a delegated session's trajectory (record and transcript) to a file",
		ArgsUsage: "<session>",
		Description: "Writes {\"version\":1,\"session\":{...},\"transcript\":[...]} to --output (default\n" +
			"<git-common-dir>/codex/exports/<session>.json, outside the work tree: a transcript may hold\n" +
			"anything the agent saw, and a file in the work tree is one `git add -A` from a commit);\n" +
			"\"-\" writes to stdout. The transcript is the agent CLI's JSON lines as received, kept on the\n" +
			"machine that ran the turns. `git codex delegate resume --trajectory-path <file>` resumes from it.",
		Flags: []cli.Flag{&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "the `FILE` to write (\"-\": stdout)"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageError{err: fmt.Errorf("export takes one session id")}
			}
			opts := delegateExportOptions{Session: c.Args().First(), Output: c.String("output")}
			caller, st, err := e.session(c)
			if err != nil {
				return err
			}
			defer st.Close()
			if opts.Output == "" {
				opts.Output = defaultExportPath(st.GitDir(), opts.Session)
			}
			x, err := delegate.ExportTrajectory(c.Context, st, caller, opts.Session)
			if err != nil {
				return tools.AsError(err)
			}
			if opts.Output == "-" {
				_, err = x.WriteTo(e.stdout)
				return err
			}
			path := e.path(opts.Output)
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return fmt.Errorf("write trajectory: %w", err)
			}
			if err := writeFileAtomic(path, x); err != nil {
				return fmt.Errorf("write trajectory: %w", err)
			}
			fmt.Fprintf(e.stderr, "wrote %s (%d message(s)); resume with `git codex delegate resume --trajectory-path %s`\n", opts.Output, x.Messages, opts.Output)
			return nil
		},
	}
}

// defaultExportPath is where `delegate export` writes when told nowhere:
// beside the transcripts git codex keeps in the git directory, never in
// the work tree, where a transcript would be one `git add -A` from a
// commit.
func defaultExportPath(gitDir, session string) string {
	return filepath.Join(gitDir, "codex", "exports", filepath.Base(session)+".json")
}

// writeFileAtomic writes what src writes to path (mode 0600: a transcript
// may hold anything the agent saw), through a temporary file beside it
// renamed into place, so a failure midway leaves no half-written file.
func writeFileAtomic(path string, src io.WriterTo) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := src.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// path resolves a file name given on the command line against the
// command's working directory.
func (e *env) path(name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(e.dir, name)
}

// renderDelegation prints the delegation tools' results for a person.
func (e *env) renderDelegation(data any) (bool, error) {
	w := e.stdout
	switch d := data.(type) {
	case *delegate.DelegateResult:
		fmt.Fprintf(w, "session: %s (%s, %s)\n", d.SessionID, d.Agent, d.Status)
		fmt.Fprintf(w, "cost:    $%.4f, %d turn(s), %d token(s)\n", d.CostUSD, d.NumTurns, d.TokensUsed)
		if d.Partial {
			fmt.Fprintf(w, "partial: %s (%s)\n", d.Reason, d.Error)
		} else if d.Reason != "" {
			fmt.Fprintf(w, "note:    %s (%s)\n", d.Reason, d.Error)
		}
		if d.OutputCut != nil {
			fmt.Fprintf(w, "cut:     %s\n", d.OutputCut.Summary())
		}
		fmt.Fprintf(w, "\n%s\n", d.Result)
	case *delegate.SessionStopped:
		fmt.Fprintf(w, "%s (%s)\n", d.Message, d.Status)
	case *delegate.SessionChanged:
		fmt.Fprintln(w, d.Message)
	case delegate.DelegationList:
		if len(d.Sessions) == 0 {
			fmt.Fprintln(e.stderr, "no delegated sessions; start one with `git codex delegate query <prompt>`")
			return true, nil
		}
		tp := e.table("SESSION", "AGENT", "MODEL", "STATUS", "TURNS", "COST", "OWNER")
		for _, s := range d.Sessions {
			tp.AddField(s.SessionID)
			tp.AddField(s.Agent)
			tp.AddField(s.Model)
			tp.AddField(s.Status)
			tp.AddField(fmt.Sprint(s.NumTurns))
			tp.AddField(fmt.Sprintf("$%.4f", s.CostUSD))
			tp.AddField(s.Owner)
			tp.EndRow()
		}
		return true, tp.Render()
	default:
		return false, nil
	}
	return true, nil
}

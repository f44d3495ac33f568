package app

import (
	"fmt"

	"github.com/gitcodex/git-codex/tools"
)

// renderGitHub prints the GitHub tools' results for a person; ok is false
// for any other data.
func (e *env) renderGitHub(data any) (bool, error) {
	w := e.stdout
	switch d := data.(type) {
	case *tools.PullRequestCreated:
		fmt.Fprintf(w, "pull request #%d: %s (%s into %s)\n", d.PRNumber, d.PRURL, d.BranchName, d.BaseBranch)
		if d.TaskID != "" {
			fmt.Fprintf(w, "task %s is in REVIEW\n", d.TaskID)
		}
	case *tools.IssuesCreated:
		for _, is := range d.Issues {
			fmt.Fprintf(w, "issue #%d: %s (%s)\n", is.Number, is.URL, is.Title)
		}
	case *tools.GitHubRetried:
		if len(d.Calls) == 0 {
			fmt.Fprintln(e.stderr, "no GitHub calls are waiting to be replayed")
			return true, nil
		}
		tp := e.table("CALL", "OP", "STATE", "TRIES", "LAST ERROR")
		for _, c := range d.Calls {
			tp.AddField(c.ID)
			tp.AddField(c.Op)
			tp.AddField(c.State)
			tp.AddField(fmt.Sprint(c.Attempts))
			last := string(c.LastCode)
			if c.LastError != "" {
				last += ": " + oneLine(c.LastError)
			}
			tp.AddField(last)
			tp.EndRow()
		}
		return true, tp.Render()
	default:
		return false, nil
	}
	return true, nil
}

package app

import (
	"fmt"

	"github.com/gitcodex/git-codex/tools/work"
)

// renderGitHub prints the GitHub tools' results for a person; ok is false
// for any other data.
func (e *env) renderGitHub(data any) (bool, error) {
	w := e.stdout
	switch d := data.(type) {
	case *work.PullRequestCreated:
		fmt.Fprintf(w, "pull request #%d: %s (%s into %s)\n", d.PRNumber, d.PRURL, d.BranchName, d.BaseBranch)
		if d.TaskID != "" {
			fmt.Fprintf(w, "task %s is in REVIEW\n", d.TaskID)
		}
	case *work.IssuesCreated:
		for _, is := range d.Issues {
			fmt.Fprintf(w, "issue #%d: %s (%s)\n", is.Number, is.URL, is.Title)
		}
	case *work.GitHubRetried:
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
	case *work.GitHubReviewsFetched:
		fmt.Fprintf(w, "%d review(s) delivered from %d pull request(s)\n", d.Count, d.PullRequests)
		for _, r := range d.Delivered {
			line := fmt.Sprintf("review %d (%s by @%s) of #%d: delivered to %s as %.12s (feedback %s)", r.ReviewID, r.State, r.User, r.PR, r.Coder, r.Commit, r.FeedbackID)
			if r.Completed != "" {
				line += "; task " + r.Completed + " COMPLETED"
			}
			if r.SentBack != "" {
				line += "; task " + r.SentBack + " IN_PROGRESS again"
			}
			fmt.Fprintln(w, line)
		}
	default:
		return false, nil
	}
	return true, nil
}

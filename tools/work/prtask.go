package work

import (
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/forge"
)

// taskOutcome is the forge's TaskOutcome: a pull request opened is put on
// the task its owner held when it was asked for (g.Task), and a task
// IN_PROGRESS is submitted: REVIEW, in the review queue by its submission
// time. A task that moved on meanwhile (final, or held by someone else)
// is left alone; the pull request is on the call's record.
func taskOutcome(c *tools.Call, g forge.GitHubCall, owner string) error {
	tx := c.Tx
	now := tx.Now()
	t, err := getTask(tx, g.Task)
	if err != nil {
		return err
	}
	if taskFinal(t.State) || holderOf(t) != owner {
		return nil
	}
	t.PR, t.SubmittedAt = g.PR, &now
	if t.State == TaskInProgress {
		t.State = TaskReview
	}
	t.UpdatedAt, t.UpdatedBy, t.Clock = now, c.Caller.ID, tx.Clock()
	return tx.Put(taskPath(t.ID), t)
}

package work

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/mail"
)

// TaskClaimIn is task_claim's input.
type TaskClaimIn struct {
	ID string `json:"id" jsonschema:"the task's id"`
}

// TaskClaim takes a PENDING task for the caller.
var TaskClaim = tools.Define("task_claim", "task.claim",
	"Claim a PENDING task: you hold it and it becomes IN_PROGRESS. Fails with ALREADY_CLAIMED if someone else holds it or it is not PENDING; claiming a task you hold changes nothing. Give it back with task_release.",
	tools.CLI{Path: "task claim", Args: []string{"id"}},
	func(ctx context.Context, c *tools.Call, in TaskClaimIn) (Task, error) {
		t, err := getTask(c.Tx, in.ID)
		if err != nil {
			return Task{}, err
		}
		c.Target(t.ID)
		changed, err := grantTask(c, &t, c.Caller.ID)
		if err != nil {
			return Task{}, err
		}
		if changed {
			c.Summarize("%s claimed task %s: %s", c.Caller.ID, t.ID, mail.OneLineCut(t.Title))
		} else {
			c.Summarize("%s already holds task %s", c.Caller.ID, t.ID)
		}
		return t, mail.TouchAgent(c)
	})

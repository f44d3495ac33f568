package work

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
)

// TaskShowIn is task_show's input.
type TaskShowIn struct {
	ID string `json:"id" jsonschema:"the task's id, e.g. t-0123456789abcdef"`
}

// TaskShow returns one task.
var TaskShow = tools.Define("task_show", "task.show",
	"Show one task: its title, description, state and who holds it.",
	tools.CLI{Path: "task show", Args: []string{"id"}},
	func(ctx context.Context, c *tools.Call, in TaskShowIn) (Task, error) {
		t, err := getTask(c.Tx, in.ID)
		if err != nil {
			return Task{}, err
		}
		c.Target(t.ID)
		c.Summarize("%s looked at task %s", c.Caller.ID, t.ID)
		return t, nil
	}).Hint(tools.Hints{ReadOnly: true, Idempotent: true})

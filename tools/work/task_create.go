package work

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/mail"
)

// TaskCreateIn is task_create's input.
type TaskCreateIn struct {
	Title       string `json:"title"`
	Description string `text:"multiline" json:"description" jsonschema:"what to do and how to tell it is done"`
	EpicID      string `json:"epic_id,omitempty" jsonschema:"its epic (one you run, unless a supervisor)"`
}

// TaskCreate adds a task for someone to claim.
var TaskCreate = tools.Define("task_create", "task.create",
	"Create a task (a unit of work one agent holds), PENDING until task_claim or task_assign. With task.spawn_worker on, a worker is spawned to hold it.",
	tools.CLI{Path: "task create", Args: []string{"title"}},
	func(ctx context.Context, c *tools.Call, in TaskCreateIn) (Task, error) {
		if err := mail.CheckText(c.Config, "title", in.Title, "description", in.Description); err != nil {
			return Task{}, err
		}
		tx := c.Tx
		var epic *Epic
		if in.EpicID != "" {
			e, err := getEpic(tx, in.EpicID)
			if err != nil {
				return Task{}, err
			}
			if err := mayRunEpic(c, e, "add tasks to it"); err != nil {
				return Task{}, err
			}
			if e.State != EpicInProgress {
				return Task{}, tools.Errorf(tools.InvalidInput, "epic %s is %s; add tasks only to an epic in progress", e.ID, e.State).With("epic_id", e.ID).With("state", e.State)
			}
			epic = &e
		}
		now := tx.Now()
		t := Task{
			ID: tx.NewID("t"), Title: in.Title, Description: in.Description, State: TaskPending, EpicID: in.EpicID,
			CreatedBy: c.Caller.ID, CreatedAt: now, UpdatedAt: now, UpdatedBy: c.Caller.ID, Clock: tx.Clock(),
		}
		c.Target(t.ID)
		c.Summarize("%s created task %s: %s", c.Caller.ID, t.ID, mail.OneLineCut(t.Title))
		if c.Config.StringValue("task.spawn_worker") == "on" {
			w, err := spawnTaskWorker(ctx, c, &t, epic)
			if err != nil {
				return Task{}, err
			}
			c.Target(t.ID)
			c.Summarize("%s created task %s for worker %s: %s", c.Caller.ID, t.ID, w, mail.OneLineCut(t.Title))
		}
		if err := tx.Put(taskPath(t.ID), t); err != nil {
			return Task{}, err
		}
		return t, mail.TouchAgent(c)
	}).Hint(tools.Hints{Additive: true})

package work

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/lock"
	"github.com/gitcodex/git-codex/tools/mail"
)

// TaskReleaseIn is task_release's input.
type TaskReleaseIn struct {
	ID    string `json:"id" jsonschema:"the task's id"`
	Force bool   `json:"force,omitempty" jsonschema:"release a task someone else holds (people and supervisors only); the holder is mailed"`
}

// TaskRelease gives a task back: nobody holds it and it is PENDING again.
var TaskRelease = tools.Define("task_release", "task.release",
	"Give back a task you hold: it becomes PENDING and free for anyone to claim. People and supervisors may release anyone's with force: true, and the holder is told by mail.",
	tools.CLI{Path: "task release", Args: []string{"id"}},
	func(ctx context.Context, c *tools.Call, in TaskReleaseIn) (Task, error) {
		tx := c.Tx
		t, err := getTask(tx, in.ID)
		if err != nil {
			return Task{}, err
		}
		c.Target(t.ID)
		holder := holderOf(t)
		if holder == "" {
			return Task{}, tools.Errorf(tools.InvalidInput, "task %s is not claimed; nothing to release", t.ID).
				With("task_id", t.ID).With("state", t.State)
		}
		if taskFinal(t.State) {
			return Task{}, tools.Errorf(tools.InvalidInput, "task %s is %s, which is final; it cannot be released", t.ID, t.State).
				With("task_id", t.ID).With("state", t.State)
		}
		if holder != c.Caller.ID {
			if !in.Force || !tools.MayForce(c.Caller.Type) {
				return Task{}, tools.Errorf(tools.PermissionDenied, "task %s is held by %s, not by you; only a person or a supervisor may release it, with force", t.ID, holder).
					With("task_id", t.ID).With("holder", holder)
			}
			if err := lock.NotifyTaken(c, "task", t.ID, holder, "released by "+c.Caller.ID); err != nil {
				return Task{}, err
			}
		}
		t.Claim, t.State = nil, TaskPending
		t.UpdatedAt, t.UpdatedBy, t.Clock = tx.Now(), c.Caller.ID, tx.Clock()
		if err := noteHeld(c, holder, t.ID, false); err != nil {
			return Task{}, err
		}
		c.Summarize("%s released task %s", c.Caller.ID, t.ID)
		if err := tx.Put(taskPath(t.ID), t); err != nil {
			return Task{}, err
		}
		return t, mail.TouchAgent(c)
	})

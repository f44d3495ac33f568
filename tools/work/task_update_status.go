package work

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/lock"
	"github.com/gitcodex/git-codex/tools/mail"
)

// TaskUpdateStatusIn is task_update_status's input.
type TaskUpdateStatusIn struct {
	ID    string `json:"id" jsonschema:"the task's id"`
	State string `json:"state" jsonschema:"IN_PROGRESS, REVIEW, COMPLETED or CANCELLED"`
}

// TaskUpdateStatus moves a task along.
var TaskUpdateStatus = tools.Define("task_update_status", "task.update_status",
	"Set a task's status: IN_PROGRESS, REVIEW, COMPLETED or CANCELLED (final). Holder, creator, supervisors, people. "+
		"REVIEW comes before COMPLETED, set by someone other than the holder (unless task.allow_skip_review).",
	tools.CLI{Path: "task status", Args: []string{"id", "state"}},
	func(ctx context.Context, c *tools.Call, in TaskUpdateStatusIn) (Task, error) {
		if err := validTaskState("state", in.State); err != nil {
			return Task{}, err
		}
		if in.State == TaskPending {
			return Task{}, tools.Errorf(tools.InvalidInput, "a task becomes PENDING only when released; use `git codex task release %s`", in.ID).
				With("field", "state").With("state", in.State)
		}
		tx := c.Tx
		t, err := getTask(tx, in.ID)
		if err != nil {
			return Task{}, err
		}
		c.Target(t.ID)
		holder := holderOf(t)
		if holder != c.Caller.ID && t.CreatedBy != c.Caller.ID && !tools.MayForce(c.Caller.Type) {
			who := "nobody holds it"
			if holder != "" {
				who = "it is held by " + holder
			}
			return Task{}, tools.Errorf(tools.PermissionDenied, "you may not change task %s: %s, and %s created it; only its holder, its creator, a person or a supervisor may", t.ID, who, t.CreatedBy).
				With("task_id", t.ID).With("holder", holder).With("created_by", t.CreatedBy)
		}
		if t.State == in.State { // a retry, or nothing to do
			c.Summarize("%s left task %s %s", c.Caller.ID, t.ID, t.State)
			return t, mail.TouchAgent(c)
		}
		if taskFinal(t.State) {
			return Task{}, tools.Errorf(tools.InvalidInput, "task %s is %s, which is final; create a new task for more work", t.ID, t.State).
				With("task_id", t.ID).With("state", t.State)
		}
		if holder == "" && in.State != TaskCancelled {
			return Task{}, tools.Errorf(tools.InvalidInput, "task %s is not claimed, so it can only be CANCELLED; claim it first with `git codex task claim %s`", t.ID, t.ID).
				With("task_id", t.ID).With("state", t.State)
		}
		if err := checkMove(c, t, in.State); err != nil {
			return Task{}, err
		}
		if holder != "" && holder != c.Caller.ID {
			// the holder may be working on it: tell it
			if err := lock.NotifyTaken(c, "task", t.ID, holder, "moved to "+in.State+" by "+c.Caller.ID); err != nil {
				return Task{}, err
			}
		}
		from := t.State
		t.State = in.State
		t.UpdatedAt, t.UpdatedBy, t.Clock = tx.Now(), c.Caller.ID, tx.Clock()
		if taskFinal(t.State) {
			if err := noteHeld(c, holder, t.ID, false); err != nil {
				return Task{}, err
			}
		}
		if t.State == TaskReview { // submitted (again): its place in the review queue
			at := t.UpdatedAt
			t.SubmittedAt = &at
		}
		c.Summarize("%s moved task %s from %s to %s", c.Caller.ID, t.ID, from, t.State)
		if err := tx.Put(taskPath(t.ID), t); err != nil {
			return Task{}, err
		}
		return t, mail.TouchAgent(c)
	})

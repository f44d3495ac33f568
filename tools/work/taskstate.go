package work

import (
	"slices"

	"github.com/gitcodex/git-codex/tools"
)

// The task state machine. A task is created PENDING; a claim (task_claim,
// task_assign) makes it IN_PROGRESS and a release PENDING again; its
// holder submits it for review (REVIEW: task_update_status, or
// create_pull_request); review sends it back (IN_PROGRESS:
// epic_request_changes) or completes it (COMPLETED: epic_approve_pr, or
// someone other than the holder). CANCELLED calls it off from any state
// that is not final. Work never goes from IN_PROGRESS to COMPLETED without
// a review, and a holder never completes its own work from REVIEW, unless
// task.allow_skip_review is on.

// taskMoves lists where task_update_status may take a task from each
// state that is not final (PENDING is reached only by a release).
func taskMoves() map[string][]string {
	return map[string][]string{
		TaskPending:    {TaskCancelled},
		TaskInProgress: {TaskReview, TaskCompleted, TaskCancelled},
		TaskReview:     {TaskInProgress, TaskCompleted, TaskCancelled},
	}
}

// checkMove refuses a move of t to state that the state machine does not
// allow for this caller.
func checkMove(c *tools.Call, t Task, to string) error {
	if !slices.Contains(taskMoves()[t.State], to) {
		return tools.Errorf(tools.InvalidInput, "task %s cannot go from %s to %s", t.ID, t.State, to).
			With("task_id", t.ID).With("from", t.State).With("to", to)
	}
	if to != TaskCompleted || c.Config.StringValue("task.allow_skip_review") == "on" {
		return nil
	}
	if t.State == TaskInProgress {
		return tools.Errorf(tools.InvalidInput, "task %s is IN_PROGRESS: move it to REVIEW first (or open its pull request) and have it approved; COMPLETED straight from IN_PROGRESS skips review (config task.allow_skip_review)", t.ID).
			With("task_id", t.ID).With("from", t.State).With("to", to)
	}
	if holderOf(t) == c.Caller.ID {
		return tools.Errorf(tools.InvalidInput, "task %s is yours: someone else reviews and completes it (its creator %s, a supervisor, a person); config task.allow_skip_review lets a holder complete its own", t.ID, t.CreatedBy).
			With("task_id", t.ID).With("from", t.State).With("to", to)
	}
	return nil
}

// taskKeys are the settings of tasks.
func taskKeys() []tools.ConfigKey {
	onOff := []string{"off", "on"}
	return []tools.ConfigKey{
		{Name: "task.spawn_worker", Kind: "string", Default: "off", OneOf: onOff,
			Doc: "on: task_create spawns a worker instance task-<id>-<slug> for each new task (from its epic's branch), which holds the task at once"},
		{Name: "task.allow_skip_review", Kind: "string", Default: "off", OneOf: onOff,
			Doc: "on: a task may go from IN_PROGRESS to COMPLETED, and its holder may complete it, without a review"},
	}
}

package work

import (
	"errors"
	"fmt"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/prompt"
)

const dirTasks = "tasks"

// taskIDPattern is the shape of ids NewID("t") makes.
var taskIDPattern = tools.LazyRegexp(`^t-[0-9a-z]{16}$`)

func taskPath(id string) string {
	return dirTasks + "/" + gitstate.Fanout(id) + "/" + id + ".json"
}

// taskKind: tasks/<x>/<y>/<id>.json. One holder at a time; a task that
// ended (COMPLETED, CANCELLED) on one side stays ended.
func taskKind() tools.Kind {
	k := tools.Kind{Name: "task", Dir: dirTasks, Depth: 3, Fanout: 2, Kept: true, Claim: &tools.ClaimRule{
		Resource: "id", Coupled: []string{"state"},
		EndField: "state", EndValues: []string{TaskCompleted, TaskCancelled},
	}}
	return tools.RecordKind(k, func(rel []string, name string, t *Task) error {
		if t.ID != name || !taskIDPattern.MatchString(t.ID) || !tools.FannedOut(rel, t.ID) {
			return fmt.Errorf("task record %q does not belong at this path", t.ID)
		}
		if err := validTaskState("state", t.State); err != nil {
			return err
		}
		return tools.ValidClaim(t.Claim)
	})
}

// Task states. A task is created PENDING, becomes IN_PROGRESS when claimed,
// goes to REVIEW when its holder submits it, and ends COMPLETED or
// CANCELLED; releasing it makes it PENDING again.
const (
	TaskPending    = "PENDING"
	TaskInProgress = "IN_PROGRESS"
	TaskReview     = "REVIEW"
	TaskCompleted  = "COMPLETED"
	TaskCancelled  = "CANCELLED"
)

// Task is a unit of work (seed 003) that one agent at a time holds: its
// claim. Mutable: Clock is the Lamport time of its last change.
type Task struct {
	ID          string       `json:"id"`
	Title       string       `json:"title"`
	Description string       `json:"description"`
	State       string       `json:"state"`
	Claim       *tools.Claim `json:"claim" jsonschema:"who holds the task; null while it is open"`
	CreatedBy   string       `json:"created_by"`
	CreatedAt   time.Time    `json:"created_at"`
	UpdatedAt   time.Time    `json:"updated_at"`
	UpdatedBy   string       `json:"updated_by"`
	// EpicID is the epic the task belongs to, if any.
	EpicID string `json:"epic_id,omitempty"`
	// PR is the pull request its holder opened for it (create_pull_request);
	// SubmittedAt orders the review queue.
	PR          *tools.PullRequest `json:"pr,omitempty"`
	SubmittedAt *time.Time         `json:"submitted_at,omitempty"`
	Clock       gitstate.Clock     `json:"clock"`
}

// taskStates lists the task states in the order a task moves through them.
func taskStates() []string {
	return []string{TaskPending, TaskInProgress, TaskReview, TaskCompleted, TaskCancelled}
}

// validTaskState refuses anything but one of the five task states.
func validTaskState(field, s string) error {
	for _, st := range taskStates() {
		if s == st {
			return nil
		}
	}
	return tools.Errorf(tools.InvalidInput, "unknown task state %q; use one of PENDING, IN_PROGRESS, REVIEW, COMPLETED or CANCELLED", s).
		With("field", field).With("state", s)
}

// taskFinal reports a state a task never leaves.
func taskFinal(state string) bool { return state == TaskCompleted || state == TaskCancelled }

// getTask reads a task's record, or fails with RESOURCE_NOT_FOUND. An id
// that NewID("t") cannot have made never reaches a record path.
func getTask(tx *gitstate.Tx, id string) (Task, error) {
	notFound := tools.Errorf(tools.ResourceNotFound, "no task %q; list them with `git codex task list`", id).With("task_id", id)
	if !taskIDPattern.MatchString(id) {
		return Task{}, notFound
	}
	var t Task
	err := tx.Get(taskPath(id), &t)
	if errors.Is(err, gitstate.ErrNotFound) {
		return Task{}, notFound
	}
	return t, err
}

// PromptTask is the task prompt_execute names, for its {codex_task_*}: the
// reader the assembly hands tools/prompt, which sits below tasks.
func PromptTask(tx *gitstate.Tx, id string) (prompt.Task, error) {
	t, err := getTask(tx, id)
	return prompt.Task{ID: t.ID, Title: t.Title, Description: t.Description}, err
}

// holderOf is the task's holder, or "" while it is open.
func holderOf(t Task) string {
	if t.Claim == nil {
		return ""
	}
	return t.Claim.Holder
}

// grantTask gives a task to holder, or says why it cannot be had: only a
// PENDING task nobody holds can be claimed. A task holder already holds
// (and has not finished) is left as it is: changed is false.
func grantTask(c *tools.Call, t *Task, holder string) (changed bool, err error) {
	current := holderOf(*t)
	if current == holder && !taskFinal(t.State) {
		return false, nil
	}
	if current != "" || t.State != TaskPending {
		msg := "task %s is %s"
		args := []any{t.ID, t.State}
		if current != "" {
			msg += " and held by %s"
			args = append(args, current)
		}
		return false, tools.Errorf(tools.AlreadyClaimed, msg+"; only a PENDING task nobody holds can be claimed; pick another with `git codex task list --state PENDING`", args...).
			With("task_id", t.ID).With("holder", current).With("state", t.State)
	}
	tx := c.Tx
	now := tx.Now()
	t.Claim = &tools.Claim{Holder: holder, Clock: tx.Clock(), At: now}
	t.State = TaskInProgress
	t.UpdatedAt, t.UpdatedBy, t.Clock = now, c.Caller.ID, tx.Clock()
	if err := noteHeld(c, holder, t.ID, true); err != nil {
		return false, err
	}
	return true, tx.Put(taskPath(t.ID), *t)
}

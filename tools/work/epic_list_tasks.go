package work

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
)

// EpicListTasksIn is epic_list_tasks's input.
type EpicListTasksIn struct {
	EpicID string `json:"epic_id,omitempty" jsonschema:"the epic (default: the newest epic in progress that you run)"`
	State  string `json:"state,omitempty" jsonschema:"only tasks in this state: PENDING, IN_PROGRESS, REVIEW, COMPLETED or CANCELLED"`
}

// EpicTaskList is what epic_list_tasks returns.
type EpicTaskList struct {
	EpicID string `json:"epic_id"`
	Count  int    `json:"count"`
	Tasks  []Task `json:"tasks"`
}

// EpicListTasks lists one epic's tasks.
var EpicListTasks = tools.Define("epic_list_tasks", "epic.list_tasks",
	"List an epic's tasks, oldest first, optionally only those in one state. Without epic_id: the newest epic in progress that you run.",
	tools.CLI{Path: "epic tasks"},
	func(ctx context.Context, c *tools.Call, in EpicListTasksIn) (EpicTaskList, error) {
		if in.State != "" {
			if err := validTaskState("state", in.State); err != nil {
				return EpicTaskList{}, err
			}
		}
		e, err := epicFor(c, in.EpicID)
		if err != nil {
			return EpicTaskList{}, err
		}
		tasks, err := epicTasks(c.Tx, e.ID, in.State)
		if err != nil {
			return EpicTaskList{}, err
		}
		c.Target(e.ID)
		c.Summarize("%s listed %d task(s) of epic %s", c.Caller.ID, len(tasks), e.ID)
		return EpicTaskList{EpicID: e.ID, Count: len(tasks), Tasks: tasks}, nil
	}).Hint(tools.Hints{ReadOnly: true, Idempotent: true})

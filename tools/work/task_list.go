package work

import (
	"context"
	"sort"

	"github.com/gitcodex/git-codex/tools"
)

// TaskListIn is task_list's input.
type TaskListIn struct {
	State  string `json:"state,omitempty" jsonschema:"only tasks in this state: PENDING, IN_PROGRESS, REVIEW, COMPLETED or CANCELLED"`
	Holder string `json:"holder,omitempty" jsonschema:"only tasks this agent or person holds"`
}

// TaskList is what task_list returns, oldest task first.
type TaskList struct {
	Count int    `json:"count"`
	Tasks []Task `json:"tasks"`
}

// TaskListTool lists tasks.
var TaskListTool = tools.Define("task_list", "task.list",
	"List tasks, oldest first, optionally only those in one state (state: PENDING finds work to claim) or held by one agent.",
	tools.CLI{Path: "task list"},
	func(ctx context.Context, c *tools.Call, in TaskListIn) (TaskList, error) {
		if in.State != "" {
			if err := validTaskState("state", in.State); err != nil {
				return TaskList{}, err
			}
		}
		out := TaskList{Tasks: []Task{}}
		err := tools.WalkJSON(c.Tx, dirTasks, func(t Task) {
			if (in.State == "" || t.State == in.State) && (in.Holder == "" || holderOf(t) == in.Holder) {
				out.Tasks = append(out.Tasks, t)
			}
		})
		if err != nil {
			return TaskList{}, err
		}
		sort.Slice(out.Tasks, func(i, j int) bool { return out.Tasks[i].ID < out.Tasks[j].ID })
		out.Count = len(out.Tasks)
		c.Summarize("%s listed %d task(s)", c.Caller.ID, out.Count)
		return out, nil
	}).Hint(tools.Hints{ReadOnly: true, Idempotent: true})

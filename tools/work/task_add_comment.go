package work

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/mail"
)

// TaskAddCommentIn is task_add_comment's input.
type TaskAddCommentIn struct {
	TaskID string `json:"task_id" jsonschema:"the task's id"`
	Body   string `text:"multiline" json:"body" jsonschema:"the comment"`
}

// TaskAddComment records a comment on a task.
var TaskAddComment = tools.Define("task_add_comment", "task.add_comment",
	"Add a comment to a task: progress, a question, a decision about it. The task's holder reads its comments (and review feedback) with agent_get_task.",
	tools.CLI{Path: "task comment", Args: []string{"task_id", "body"}},
	func(ctx context.Context, c *tools.Call, in TaskAddCommentIn) (Comment, error) {
		t, err := getTask(c.Tx, in.TaskID)
		if err != nil {
			return Comment{}, err
		}
		if err := mail.CheckText(c.Config, "task_id", t.ID, "body", in.Body); err != nil {
			return Comment{}, err
		}
		m, err := addComment(c, t, CommentNote, in.Body)
		if err != nil {
			return Comment{}, err
		}
		c.Target(t.ID)
		c.Summarize("%s commented on task %s", c.Caller.ID, t.ID)
		return m, mail.TouchAgent(c)
	}).Hint(tools.Hints{Additive: true})

package work

import (
	"context"
	"fmt"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/mail"
)

// EpicRequestChangesIn is epic_request_changes's input.
type EpicRequestChangesIn struct {
	TaskID   string `json:"task_id" jsonschema:"the task's id"`
	Feedback string `text:"multiline" json:"feedback" jsonschema:"what to change, specifically"`
}

// ChangesRequested is what epic_request_changes returns.
type ChangesRequested struct {
	TaskID    string `json:"task_id"`
	State     string `json:"state"`
	Holder    string `json:"holder"`
	MailID    string `json:"mail_id"`
	CommentID string `json:"comment_id"`
	Message   string `json:"message"`
}

// EpicRequestChanges sends a task in REVIEW back with feedback.
var EpicRequestChanges = tools.Define("epic_request_changes", "epic.request_changes",
	"Send a task in REVIEW back to its worker: the feedback is mailed to it and kept as a comment on the task (agent_get_task shows it), and the task is IN_PROGRESS again. "+
		"The worker pushes fixes to the same pull request and moves the task to REVIEW again.",
	tools.CLI{Path: "epic request-changes", Args: []string{"task_id", "feedback"}},
	func(ctx context.Context, c *tools.Call, in EpicRequestChangesIn) (ChangesRequested, error) {
		t, _, err := reviewedTask(c, in.TaskID, "epic_request_changes")
		if err != nil {
			return ChangesRequested{}, err
		}
		if err := mail.CheckText(c.Config, "task_id", t.ID, "feedback", in.Feedback); err != nil {
			return ChangesRequested{}, err
		}
		holder := holderOf(t)
		if holder == "" {
			return ChangesRequested{}, tools.Errorf(tools.InvalidInput, "task %s is in REVIEW but nobody holds it; assign it with `git codex task assign`", t.ID).With("task_id", t.ID)
		}
		tx := c.Tx
		cm, err := addComment(c, t, CommentChangesRequested, in.Feedback)
		if err != nil {
			return ChangesRequested{}, err
		}
		body := in.Feedback + "\n\n" + c.Caller.ID + " requested changes on task " + t.ID + " (" + t.Title + ")"
		if t.PR != nil {
			body += fmt.Sprintf(", pull request #%d", t.PR.Number)
		}
		body += ". It is IN_PROGRESS again: push your fixes to the same branch, then `git codex task status " + t.ID + " REVIEW`."
		m, err := mail.Post(c, holder, "Changes requested: "+mail.OneLineCut(t.Title), body, "")
		if err != nil {
			return ChangesRequested{}, err
		}
		t.State = TaskInProgress
		t.UpdatedAt, t.UpdatedBy, t.Clock = tx.Now(), c.Caller.ID, tx.Clock()
		if err := tx.Put(taskPath(t.ID), t); err != nil {
			return ChangesRequested{}, err
		}
		c.Target(t.ID)
		c.Summarize("%s requested changes on task %s", c.Caller.ID, t.ID)
		return ChangesRequested{
			TaskID: t.ID, State: t.State, Holder: holder, MailID: m.ID, CommentID: cm.ID,
			Message: "feedback sent to " + holder + "; task " + t.ID + " is IN_PROGRESS again",
		}, mail.TouchAgent(c)
	})

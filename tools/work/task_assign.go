package work

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/mail"
)

// TaskAssignIn is task_assign's input.
type TaskAssignIn struct {
	ID    string `json:"id" jsonschema:"the task's id"`
	Agent string `json:"agent" jsonschema:"id of the registered agent to give it to"`
}

// TaskAssign gives a PENDING task to an agent and mails it.
var TaskAssign = tools.Define("task_assign", "task.assign",
	"Give a PENDING task to a registered agent, as if it had claimed it, and mail the agent the task. Fails with ALREADY_CLAIMED if someone holds it or it is not PENDING; assigning it again to its holder changes nothing.",
	tools.CLI{Path: "task assign", Args: []string{"id", "agent"}},
	func(ctx context.Context, c *tools.Call, in TaskAssignIn) (Task, error) {
		tx := c.Tx
		t, err := getTask(tx, in.ID)
		if err != nil {
			return Task{}, err
		}
		c.Target(t.ID)
		a, err := tools.GetAgent(tx, in.Agent)
		if err != nil {
			return Task{}, err
		}
		if !tools.Allows(c.Config, a.Type, TaskUpdateStatus.Permission) {
			return Task{}, tools.Errorf(tools.InvalidInput, "%s is a %s agent, whose policy does not allow %s: it could not move the task along; assign it to an agent that may",
				a.ID, a.Type, TaskUpdateStatus.Permission).With("agent_id", a.ID).With("agent_type", string(a.Type))
		}
		changed, err := grantTask(c, &t, a.ID)
		if err != nil {
			return Task{}, err
		}
		if !changed {
			c.Summarize("%s already holds task %s", a.ID, t.ID)
			return t, mail.TouchAgent(c)
		}
		body := c.Caller.ID + " assigned you task " + t.ID + ": " + t.Title + "\n\n" + t.Description +
			"\n\nSee it with `git codex task show " + t.ID + "`; when it is ready, `git codex task status " + t.ID + " REVIEW`."
		if _, err := mail.Post(c, a.ID, "Task assigned: "+mail.OneLineCut(t.Title), body, ""); err != nil {
			return Task{}, err
		}
		c.Summarize("%s assigned task %s to %s: %s", c.Caller.ID, t.ID, a.ID, mail.OneLineCut(t.Title))
		return t, mail.TouchAgent(c)
	})

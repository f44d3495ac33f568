package work

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
)

// AgentGetTaskIn is agent_get_task's input: none.
type AgentGetTaskIn struct{}

// AgentTask is what agent_get_task returns: the task, where to work on it,
// and its comments (review feedback among them).
type AgentTask struct {
	Task
	WorktreePath string    `json:"worktree_path,omitempty"`
	BranchName   string    `json:"branch_name,omitempty"`
	PRURL        string    `json:"pr_url,omitempty"`
	Comments     []Comment `json:"comments"`
}

// AgentGetTask returns a worker's current task.
var AgentGetTask = tools.Define("agent_get_task", "agent.get_task",
	"Get your current task (workers): the task you hold, IN_PROGRESS first, with your worktree, branch, pull request and the task's comments and review feedback. "+
		"Fails with INVALID_AGENT_STATE if you are not a worker or hold no task.",
	tools.CLI{Path: "agent task"},
	func(ctx context.Context, c *tools.Call, _ AgentGetTaskIn) (AgentTask, error) {
		if c.Caller.Type != tools.TypeWorker {
			return AgentTask{}, tools.Errorf(tools.InvalidAgentState, "%s is a %s agent, not a worker: only workers have a current task; see tasks with `git codex task list --holder %s`", c.Caller.ID, c.Caller.Type, c.Caller.ID).
				With("agent_id", c.Caller.ID).With("agent_type", string(c.Caller.Type))
		}
		t, ok, err := currentTask(c.Tx, *c.Agent)
		if err != nil {
			return AgentTask{}, err
		}
		if !ok {
			return AgentTask{}, errNoTask(c)
		}
		comments, err := taskComments(c.Tx, t.ID)
		if err != nil {
			return AgentTask{}, err
		}
		out := AgentTask{Task: t, WorktreePath: c.Agent.Worktree, BranchName: c.Agent.Branch, Comments: comments}
		if t.PR != nil {
			out.PRURL = t.PR.URL
			if out.BranchName == "" {
				out.BranchName = t.PR.Head
			}
		}
		c.Target(t.ID)
		c.Summarize("%s looked at its task %s", c.Caller.ID, t.ID)
		return out, nil
	}).Hint(tools.Hints{ReadOnly: true, Idempotent: true})

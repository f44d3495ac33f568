package work

import (
	"context"
	"slices"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
)

// StateBusy is the state agent_get_status shows for an agent that holds a
// task (seed 003's BUSY); it is derived from the tasks, never stored.
const StateBusy = "BUSY"

// AgentStatus is what agent_get_status returns: the caller's record and
// the work it has now.
type AgentStatus struct {
	tools.Agent
	CurrentTaskID string `json:"current_task_id,omitempty" jsonschema:"the task you hold (IN_PROGRESS first, then REVIEW)"`
	CurrentEpicID string `json:"current_epic_id,omitempty" jsonschema:"your current task's epic, or the newest epic in progress that you run"`
}

// agentStatus fills in a's current task and epic, and shows it BUSY while
// it holds a task.
func agentStatus(c *tools.Call, a tools.Agent) (AgentStatus, error) {
	out := AgentStatus{Agent: a}
	t, ok, err := currentTask(c.Tx, a)
	if err != nil {
		return out, err
	}
	if ok {
		out.CurrentTaskID, out.CurrentEpicID, out.State = t.ID, t.EpicID, StateBusy
	}
	if out.CurrentEpicID == "" {
		e, ok, err := supervisedEpic(c.Tx, a.ID)
		if err != nil {
			return out, err
		}
		if ok {
			out.CurrentEpicID = e.ID
		}
	}
	return out, nil
}

// currentTask is the task a holds and has not finished: the oldest
// IN_PROGRESS one, else the oldest in REVIEW. It reads the tasks its
// record lists (HeldTasks), each checked against the task's claim, so its
// cost does not grow with the number of tasks; a person, who has no
// record, is looked for among every task.
func currentTask(tx *gitstate.Tx, a tools.Agent) (Task, bool, error) {
	var best Task
	consider := func(t Task) {
		if holderOf(t) != a.ID || (t.State != TaskInProgress && t.State != TaskReview) {
			return
		}
		if best.ID == "" || taskRank(t) < taskRank(best) || taskRank(t) == taskRank(best) && t.ID < best.ID {
			best = t
		}
	}
	if a.Type == tools.TypeHuman {
		err := tools.WalkJSON(tx, dirTasks, consider)
		return best, best.ID != "", err
	}
	for _, id := range a.HeldTasks {
		t, err := getTask(tx, id)
		if err != nil {
			if tools.AsError(err).Code == tools.ResourceNotFound {
				continue
			}
			return Task{}, false, err
		}
		consider(t)
	}
	return best, best.ID != "", nil
}

// taskRank orders the tasks an agent holds: work in progress first.
func taskRank(t Task) int {
	if t.State == TaskInProgress {
		return 0
	}
	return 1
}

// noteHeld adds (held) or removes task id from holder's HeldTasks. The
// caller's own record is changed in place (c.Agent, which touchAgent
// writes later); a holder without a record (a person) has nothing to note.
func noteHeld(c *tools.Call, holder, id string, held bool) error {
	a := c.Agent
	if a == nil || a.ID != holder {
		rec, err := tools.GetAgent(c.Tx, holder)
		if err != nil {
			return nil
		}
		a = &rec
	}
	list := make([]string, 0, len(a.HeldTasks)+1)
	for _, x := range a.HeldTasks {
		if x != id {
			list = append(list, x)
		}
	}
	if held {
		list = append(list, id)
	}
	if slices.Equal(list, a.HeldTasks) {
		return nil
	}
	if len(list) == 0 {
		list = nil
	}
	a.HeldTasks = list
	a.UpdatedAt, a.UpdatedBy, a.Clock = c.Tx.Now(), c.Caller.ID, c.Tx.Clock()
	return c.Tx.Put(tools.AgentPath(a.ID), *a)
}

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

// errNoTask is INVALID_AGENT_STATE for a worker that holds no task.
func errNoTask(c *tools.Call) *tools.Error {
	return tools.Errorf(tools.InvalidAgentState, "%s holds no task; find one with `git codex task list --state PENDING` and claim it", c.Caller.ID).
		With("agent_id", c.Caller.ID)
}

// AgentGetEpicIn is agent_get_epic's input: none.
type AgentGetEpicIn struct{}

// AgentGetEpic returns the caller's current epic.
var AgentGetEpic = tools.Define("agent_get_epic", "agent.get_epic",
	"Get your current epic: a worker's is its current task's epic; a supervisor's (anyone else's) the newest epic in progress that it runs. "+
		"Fails with INVALID_AGENT_STATE if you have none.",
	tools.CLI{Path: "agent epic"},
	func(ctx context.Context, c *tools.Call, _ AgentGetEpicIn) (Epic, error) {
		var id string
		if c.Caller.Type == tools.TypeWorker {
			t, ok, err := currentTask(c.Tx, *c.Agent)
			if err != nil {
				return Epic{}, err
			}
			if !ok {
				return Epic{}, errNoTask(c)
			}
			if t.EpicID == "" {
				return Epic{}, tools.Errorf(tools.InvalidAgentState, "your task %s belongs to no epic", t.ID).With("agent_id", c.Caller.ID).With("task_id", t.ID)
			}
			id = t.EpicID
		} else {
			e, ok, err := supervisedEpic(c.Tx, c.Caller.ID)
			if err != nil {
				return Epic{}, err
			}
			if !ok {
				return Epic{}, tools.Errorf(tools.InvalidAgentState, "%s runs no epic in progress; create one with `git codex epic create`", c.Caller.ID).With("agent_id", c.Caller.ID)
			}
			id = e.ID
		}
		e, err := getEpic(c.Tx, id)
		if err != nil {
			return Epic{}, err
		}
		c.Target(e.ID)
		c.Summarize("%s looked at its epic %s", c.Caller.ID, e.ID)
		return e, nil
	}).Hint(tools.Hints{ReadOnly: true, Idempotent: true})

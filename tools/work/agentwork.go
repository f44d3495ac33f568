package work

import (
	"slices"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
)

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

// errNoTask is INVALID_AGENT_STATE for a worker that holds no task.
func errNoTask(c *tools.Call) *tools.Error {
	return tools.Errorf(tools.InvalidAgentState, "%s holds no task; find one with `git codex task list --state PENDING` and claim it", c.Caller.ID).
		With("agent_id", c.Caller.ID)
}

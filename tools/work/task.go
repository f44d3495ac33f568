package work

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/lock"
	"github.com/gitcodex/git-codex/tools/mail"
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

// TaskCreateIn is task_create's input.
type TaskCreateIn struct {
	Title       string `json:"title"`
	Description string `text:"multiline" json:"description" jsonschema:"what to do and how to tell it is done"`
	EpicID      string `json:"epic_id,omitempty" jsonschema:"its epic (one you run, unless a supervisor)"`
}

// TaskCreate adds a task for someone to claim.
var TaskCreate = tools.Define("task_create", "task.create",
	"Create a task (a unit of work one agent holds), PENDING until task_claim or task_assign. With task.spawn_worker on, a worker is spawned to hold it.",
	tools.CLI{Path: "task create", Args: []string{"title"}},
	func(ctx context.Context, c *tools.Call, in TaskCreateIn) (Task, error) {
		if err := mail.CheckText(c.Config, "title", in.Title, "description", in.Description); err != nil {
			return Task{}, err
		}
		tx := c.Tx
		var epic *Epic
		if in.EpicID != "" {
			e, err := getEpic(tx, in.EpicID)
			if err != nil {
				return Task{}, err
			}
			if err := mayRunEpic(c, e, "add tasks to it"); err != nil {
				return Task{}, err
			}
			if e.State != EpicInProgress {
				return Task{}, tools.Errorf(tools.InvalidInput, "epic %s is %s; add tasks only to an epic in progress", e.ID, e.State).With("epic_id", e.ID).With("state", e.State)
			}
			epic = &e
		}
		now := tx.Now()
		t := Task{
			ID: tx.NewID("t"), Title: in.Title, Description: in.Description, State: TaskPending, EpicID: in.EpicID,
			CreatedBy: c.Caller.ID, CreatedAt: now, UpdatedAt: now, UpdatedBy: c.Caller.ID, Clock: tx.Clock(),
		}
		c.Target(t.ID)
		c.Summarize("%s created task %s: %s", c.Caller.ID, t.ID, mail.OneLineCut(t.Title))
		if c.Config.StringValue("task.spawn_worker") == "on" {
			w, err := spawnTaskWorker(ctx, c, &t, epic)
			if err != nil {
				return Task{}, err
			}
			c.Target(t.ID)
			c.Summarize("%s created task %s for worker %s: %s", c.Caller.ID, t.ID, w, mail.OneLineCut(t.Title))
		}
		if err := tx.Put(taskPath(t.ID), t); err != nil {
			return Task{}, err
		}
		return t, mail.TouchAgent(c)
	}).Hint(tools.Hints{Additive: true})

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

// TaskShowIn is task_show's input.
type TaskShowIn struct {
	ID string `json:"id" jsonschema:"the task's id, e.g. t-0123456789abcdef"`
}

// TaskShow returns one task.
var TaskShow = tools.Define("task_show", "task.show",
	"Show one task: its title, description, state and who holds it.",
	tools.CLI{Path: "task show", Args: []string{"id"}},
	func(ctx context.Context, c *tools.Call, in TaskShowIn) (Task, error) {
		t, err := getTask(c.Tx, in.ID)
		if err != nil {
			return Task{}, err
		}
		c.Target(t.ID)
		c.Summarize("%s looked at task %s", c.Caller.ID, t.ID)
		return t, nil
	}).Hint(tools.Hints{ReadOnly: true, Idempotent: true})

// TaskClaimIn is task_claim's input.
type TaskClaimIn struct {
	ID string `json:"id" jsonschema:"the task's id"`
}

// TaskClaim takes a PENDING task for the caller.
var TaskClaim = tools.Define("task_claim", "task.claim",
	"Claim a PENDING task: you hold it and it becomes IN_PROGRESS. Fails with ALREADY_CLAIMED if someone else holds it or it is not PENDING; claiming a task you hold changes nothing. Give it back with task_release.",
	tools.CLI{Path: "task claim", Args: []string{"id"}},
	func(ctx context.Context, c *tools.Call, in TaskClaimIn) (Task, error) {
		t, err := getTask(c.Tx, in.ID)
		if err != nil {
			return Task{}, err
		}
		c.Target(t.ID)
		changed, err := grantTask(c, &t, c.Caller.ID)
		if err != nil {
			return Task{}, err
		}
		if changed {
			c.Summarize("%s claimed task %s: %s", c.Caller.ID, t.ID, mail.OneLineCut(t.Title))
		} else {
			c.Summarize("%s already holds task %s", c.Caller.ID, t.ID)
		}
		return t, mail.TouchAgent(c)
	})

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

// TaskUpdateStatusIn is task_update_status's input.
type TaskUpdateStatusIn struct {
	ID    string `json:"id" jsonschema:"the task's id"`
	State string `json:"state" jsonschema:"IN_PROGRESS, REVIEW, COMPLETED or CANCELLED"`
}

// TaskUpdateStatus moves a task along.
var TaskUpdateStatus = tools.Define("task_update_status", "task.update_status",
	"Set a task's status: IN_PROGRESS, REVIEW, COMPLETED or CANCELLED (final). Holder, creator, supervisors, people. "+
		"REVIEW comes before COMPLETED, set by someone other than the holder (unless task.allow_skip_review).",
	tools.CLI{Path: "task status", Args: []string{"id", "state"}},
	func(ctx context.Context, c *tools.Call, in TaskUpdateStatusIn) (Task, error) {
		if err := validTaskState("state", in.State); err != nil {
			return Task{}, err
		}
		if in.State == TaskPending {
			return Task{}, tools.Errorf(tools.InvalidInput, "a task becomes PENDING only when released; use `git codex task release %s`", in.ID).
				With("field", "state").With("state", in.State)
		}
		tx := c.Tx
		t, err := getTask(tx, in.ID)
		if err != nil {
			return Task{}, err
		}
		c.Target(t.ID)
		holder := holderOf(t)
		if holder != c.Caller.ID && t.CreatedBy != c.Caller.ID && !tools.MayForce(c.Caller.Type) {
			who := "nobody holds it"
			if holder != "" {
				who = "it is held by " + holder
			}
			return Task{}, tools.Errorf(tools.PermissionDenied, "you may not change task %s: %s, and %s created it; only its holder, its creator, a person or a supervisor may", t.ID, who, t.CreatedBy).
				With("task_id", t.ID).With("holder", holder).With("created_by", t.CreatedBy)
		}
		if t.State == in.State { // a retry, or nothing to do
			c.Summarize("%s left task %s %s", c.Caller.ID, t.ID, t.State)
			return t, mail.TouchAgent(c)
		}
		if taskFinal(t.State) {
			return Task{}, tools.Errorf(tools.InvalidInput, "task %s is %s, which is final; create a new task for more work", t.ID, t.State).
				With("task_id", t.ID).With("state", t.State)
		}
		if holder == "" && in.State != TaskCancelled {
			return Task{}, tools.Errorf(tools.InvalidInput, "task %s is not claimed, so it can only be CANCELLED; claim it first with `git codex task claim %s`", t.ID, t.ID).
				With("task_id", t.ID).With("state", t.State)
		}
		if err := checkMove(c, t, in.State); err != nil {
			return Task{}, err
		}
		if holder != "" && holder != c.Caller.ID {
			// the holder may be working on it: tell it
			if err := lock.NotifyTaken(c, "task", t.ID, holder, "moved to "+in.State+" by "+c.Caller.ID); err != nil {
				return Task{}, err
			}
		}
		from := t.State
		t.State = in.State
		t.UpdatedAt, t.UpdatedBy, t.Clock = tx.Now(), c.Caller.ID, tx.Clock()
		if taskFinal(t.State) {
			if err := noteHeld(c, holder, t.ID, false); err != nil {
				return Task{}, err
			}
		}
		if t.State == TaskReview { // submitted (again): its place in the review queue
			at := t.UpdatedAt
			t.SubmittedAt = &at
		}
		c.Summarize("%s moved task %s from %s to %s", c.Caller.ID, t.ID, from, t.State)
		if err := tx.Put(taskPath(t.ID), t); err != nil {
			return Task{}, err
		}
		return t, mail.TouchAgent(c)
	})

// TaskReleaseIn is task_release's input.
type TaskReleaseIn struct {
	ID    string `json:"id" jsonschema:"the task's id"`
	Force bool   `json:"force,omitempty" jsonschema:"release a task someone else holds (people and supervisors only); the holder is mailed"`
}

// TaskRelease gives a task back: nobody holds it and it is PENDING again.
var TaskRelease = tools.Define("task_release", "task.release",
	"Give back a task you hold: it becomes PENDING and free for anyone to claim. People and supervisors may release anyone's with force: true, and the holder is told by mail.",
	tools.CLI{Path: "task release", Args: []string{"id"}},
	func(ctx context.Context, c *tools.Call, in TaskReleaseIn) (Task, error) {
		tx := c.Tx
		t, err := getTask(tx, in.ID)
		if err != nil {
			return Task{}, err
		}
		c.Target(t.ID)
		holder := holderOf(t)
		if holder == "" {
			return Task{}, tools.Errorf(tools.InvalidInput, "task %s is not claimed; nothing to release", t.ID).
				With("task_id", t.ID).With("state", t.State)
		}
		if taskFinal(t.State) {
			return Task{}, tools.Errorf(tools.InvalidInput, "task %s is %s, which is final; it cannot be released", t.ID, t.State).
				With("task_id", t.ID).With("state", t.State)
		}
		if holder != c.Caller.ID {
			if !in.Force || !tools.MayForce(c.Caller.Type) {
				return Task{}, tools.Errorf(tools.PermissionDenied, "task %s is held by %s, not by you; only a person or a supervisor may release it, with force", t.ID, holder).
					With("task_id", t.ID).With("holder", holder)
			}
			if err := lock.NotifyTaken(c, "task", t.ID, holder, "released by "+c.Caller.ID); err != nil {
				return Task{}, err
			}
		}
		t.Claim, t.State = nil, TaskPending
		t.UpdatedAt, t.UpdatedBy, t.Clock = tx.Now(), c.Caller.ID, tx.Clock()
		if err := noteHeld(c, holder, t.ID, false); err != nil {
			return Task{}, err
		}
		c.Summarize("%s released task %s", c.Caller.ID, t.ID)
		if err := tx.Put(taskPath(t.ID), t); err != nil {
			return Task{}, err
		}
		return t, mail.TouchAgent(c)
	})

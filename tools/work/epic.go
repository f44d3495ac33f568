package work

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
	"github.com/gitcodex/git-codex/tools/mail"
)

// An epic (seed 003) is a body of work a supervisor splits into tasks:
// workers hold the tasks, open pull requests into the epic's branch, the
// supervisor reviews them in order (epic_get_review_queue), approves or
// sends them back, and finally opens the epic's own pull request into the
// default branch.

const dirEpics = "epics"

// epicIDPattern is the shape of ids NewID("e") makes.
var epicIDPattern = tools.LazyRegexp(`^e-[0-9a-z]{16}$`)

func epicPath(id string) string {
	return dirEpics + "/" + gitstate.Fanout(id) + "/" + id + ".json"
}

// epicKind: epics/<x>/<y>/<id>.json. No tool deletes an epic.
func epicKind() tools.Kind {
	return tools.RecordKind(tools.Kind{Name: "epic", Dir: dirEpics, Depth: 3, Fanout: 2, Kept: true}, func(rel []string, name string, e *Epic) error {
		if e.ID != name || !epicIDPattern.MatchString(e.ID) || !tools.FannedOut(rel, e.ID) {
			return fmt.Errorf("epic record %q does not belong at this path", e.ID)
		}
		if e.State != EpicInProgress && e.State != EpicCompleted {
			return fmt.Errorf("epic state %q", e.State)
		}
		return nil
	})
}

// Epic states: an epic is IN_PROGRESS until its pull request into the
// default branch is opened (epic_create_epic_pr), then COMPLETED.
const (
	EpicInProgress = "IN_PROGRESS"
	EpicCompleted  = "COMPLETED"
)

// Epic is the record of an epic. Mutable: Clock is the Lamport time of its
// last change.
type Epic struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description"`
	State       string `json:"state"`
	// Supervisor is who runs the epic: who created it. Its tasks'
	// pull requests go to it for review.
	Supervisor string `json:"supervisor"`
	// Branch collects the epic's tasks' pull requests; BaseBranch is
	// where the epic's own pull request goes ("" means the repository's
	// default branch).
	Branch      string             `json:"branch"`
	BaseBranch  string             `json:"base_branch,omitempty"`
	BaseCommit  string             `json:"base_commit" jsonschema:"the commit the epic's branch started at"`
	PR          *tools.PullRequest `json:"pr,omitempty" jsonschema:"the epic's pull request into its base branch, once opened"`
	CreatedBy   string             `json:"created_by"`
	CreatedAt   time.Time          `json:"created_at"`
	UpdatedAt   time.Time          `json:"updated_at"`
	UpdatedBy   string             `json:"updated_by"`
	CompletedAt *time.Time         `json:"completed_at"`
	Clock       gitstate.Clock     `json:"clock"`
}

// getEpic reads an epic's record, or fails with RESOURCE_NOT_FOUND.
func getEpic(tx *gitstate.Tx, id string) (Epic, error) {
	notFound := tools.Errorf(tools.ResourceNotFound, "no epic %q; list epics' tasks with `git codex epic tasks --epic-id <id>`", id).With("epic_id", id)
	if !epicIDPattern.MatchString(id) {
		return Epic{}, notFound
	}
	var e Epic
	err := tx.Get(epicPath(id), &e)
	if errors.Is(err, gitstate.ErrNotFound) {
		return Epic{}, notFound
	}
	return e, err
}

// supervisedEpic is the caller's current epic as its supervisor: the
// newest IN_PROGRESS epic it created (seed 003's currentEpicId, derived
// from the records so that it never goes stale); ok is false when there
// is none.
func supervisedEpic(tx *gitstate.Tx, caller string) (Epic, bool, error) {
	var found Epic
	err := tools.WalkJSON(tx, dirEpics, func(e Epic) {
		if e.Supervisor == caller && e.State == EpicInProgress && e.ID > found.ID {
			found = e
		}
	})
	return found, found.ID != "", err
}

// epicFor resolves an epic_id argument: the named epic, or, when it is
// empty, the caller's own (supervisedEpic).
func epicFor(c *tools.Call, id string) (Epic, error) {
	if id != "" {
		return getEpic(c.Tx, id)
	}
	e, ok, err := supervisedEpic(c.Tx, c.Caller.ID)
	if err != nil {
		return Epic{}, err
	}
	if !ok {
		return Epic{}, tools.Errorf(tools.InvalidAgentState, "%s supervises no epic in progress; give epic_id, or create one with `git codex epic create`", c.Caller.ID).
			With("agent_id", c.Caller.ID)
	}
	return e, nil
}

// mayRunEpic refuses a caller who is neither the epic's supervisor nor a
// person or supervisor (who may act on any epic).
func mayRunEpic(c *tools.Call, e Epic, what string) error {
	if e.Supervisor == c.Caller.ID || tools.MayForce(c.Caller.Type) {
		return nil
	}
	return tools.Errorf(tools.PermissionDenied, "epic %s is run by %s; only it, a person or a supervisor may %s", e.ID, e.Supervisor, what).
		With("epic_id", e.ID).With("supervisor", e.Supervisor)
}

// epicTasks lists an epic's tasks, oldest first; state filters when set.
func epicTasks(tx *gitstate.Tx, epicID, state string) ([]Task, error) {
	tasks := []Task{}
	err := tools.WalkJSON(tx, dirTasks, func(t Task) {
		if t.EpicID == epicID && (state == "" || t.State == state) {
			tasks = append(tasks, t)
		}
	})
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].ID < tasks[j].ID })
	return tasks, err
}

// validBranchName keeps a branch name to what git accepts and nothing
// that reads as an option or a path outside refs/heads.
func validBranchName(b string) *tools.Error {
	bad := b == "" || len(b) > 200 || strings.HasPrefix(b, "-") || instance.CheckRefFormat("refs/heads/"+b) != nil
	if bad {
		return tools.Errorf(tools.InvalidInput, "%q is not a branch name git accepts", b).With("field", "branch")
	}
	return nil
}

// EpicCreateIn is epic_create's input.
type EpicCreateIn struct {
	Title       string `json:"title"`
	Description string `text:"multiline" json:"description" jsonschema:"what the epic delivers"`
	Branch      string `json:"branch,omitempty" jsonschema:"default epic/<epic id>, made from from if missing"`
	BaseBranch  string `json:"base_branch,omitempty" jsonschema:"target of the epic's pull request (default: the default branch)"`
	From        string `json:"from,omitempty" jsonschema:"revision (default HEAD)"`
}

// EpicCreated is what epic_create returns.
type EpicCreated struct {
	EpicID string `json:"epic_id"`
	Epic
	Note string `json:"note,omitempty" jsonschema:"what is left to do, e.g. the branch to make once the repository has a commit"`
}

// EpicCreate starts an epic run by the caller.
var EpicCreate = tools.Define("epic_create", "epic.create",
	"Create an epic you run, with a branch its tasks' pull requests merge into. Add tasks with task_create's epic_id; review with epic_get_review_queue, epic_approve_pr, epic_request_changes; finish with epic_create_epic_pr.",
	tools.CLI{Path: "epic create", Args: []string{"title"}},
	func(ctx context.Context, c *tools.Call, in EpicCreateIn) (*EpicCreated, error) {
		if err := mail.CheckText(c.Config, "title", in.Title, "description", in.Description); err != nil {
			return nil, err
		}
		tx := c.Tx
		id := tx.NewID("e")
		branch := in.Branch
		if branch == "" {
			branch = "epic/" + id
		}
		if err := validBranchName(branch); err != nil {
			return nil, err
		}
		if in.BaseBranch != "" {
			if err := validBranchName(in.BaseBranch); err != nil {
				return nil, err.With("field", "base_branch")
			}
		}
		from := in.From
		if from == "" {
			from = "HEAD"
		}
		base, err := c.Repo.RevParse(ctx, from)
		if err != nil && in.From != "" {
			return nil, tools.Errorf(tools.InvalidInput, "--from %q names no commit in this repository", from).With("field", "from")
		}
		if c.Repo.BranchExists(ctx, branch) {
			if base, err = c.Repo.RevParse(ctx, "refs/heads/"+branch); err != nil {
				return nil, err
			}
		}
		now := tx.Now()
		e := Epic{
			ID: id, Title: in.Title, Description: in.Description, State: EpicInProgress, Supervisor: c.Caller.ID,
			Branch: branch, BaseBranch: in.BaseBranch, BaseCommit: base,
			CreatedBy: c.Caller.ID, CreatedAt: now, UpdatedAt: now, UpdatedBy: c.Caller.ID, Clock: tx.Clock(),
		}
		if err := tx.Put(epicPath(id), e); err != nil {
			return nil, err
		}
		c.Target(id)
		c.Summarize("%s created epic %s: %s", c.Caller.ID, id, mail.OneLineCut(in.Title))
		out := &EpicCreated{EpicID: id, Epic: e}
		if base == "" {
			// a repository without a commit yet: nothing to branch from
			out.Note = "no commit to start " + branch + " from yet; make it with `git branch " + branch + "` once there is one"
			return out, mail.TouchAgent(c)
		}
		// a ref of the code repository: made after the commit, outside the
		// writer lock; an epic whose branch could not be made still stands
		// (make one as the record says)
		c.After(func(ctx context.Context, f *tools.Followup) error {
			if _, err := f.Repo.CreateBranch(ctx, branch, base); err != nil {
				return tools.Errorf(tools.InternalError, "epic %s is recorded, but its branch %s could not be made: %v; make it with `git branch %s %s`", id, branch, err, branch, base).
					With("epic_id", id)
			}
			return nil
		})
		return out, mail.TouchAgent(c)
	}).Hint(tools.Hints{Additive: true})

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

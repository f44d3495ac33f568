package work

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
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

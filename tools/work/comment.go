package work

import (
	"fmt"
	"sort"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
)

const dirComments = "comments"

// commentIDPattern is the shape of ids NewID("c") makes.
var commentIDPattern = tools.LazyRegexp(`^c-[0-9a-z]{16}$`)

func commentPath(taskID, id string) string {
	return dirComments + "/" + taskID + "/" + gitstate.Fanout(id) + "/" + id + ".json"
}

// commentKind: comments/<task-id>/<x>/<y>/<id>.json, a task's notes and
// review feedback, kept per task so reading one task's reads only its own.
// Immutable and never deleted.
func commentKind() tools.Kind {
	return tools.RecordKind(tools.Kind{Name: "comment", Dir: dirComments, Depth: 4, Fanout: 2, Kept: true}, func(rel []string, name string, m *Comment) error {
		if m.ID != name || !commentIDPattern.MatchString(m.ID) || m.TaskID != rel[0] || !taskIDPattern.MatchString(m.TaskID) || !tools.FannedOut(rel, m.ID) {
			return fmt.Errorf("comment record %q on %q does not belong at this path", m.ID, m.TaskID)
		}
		if m.Kind != CommentNote && m.Kind != CommentChangesRequested {
			return fmt.Errorf("comment kind %q", m.Kind)
		}
		return nil
	})
}

// Comment kinds: a note anyone adds (task_add_comment), or the feedback of
// a review that sent the task back (epic_request_changes).
const (
	CommentNote             = "comment"
	CommentChangesRequested = "changes_requested"
)

// Comment is one remark on a task. Immutable.
type Comment struct {
	ID         string          `json:"id"`
	TaskID     string          `json:"task_id"`
	Kind       string          `json:"kind" jsonschema:"comment, or changes_requested for a review's feedback"`
	Author     string          `json:"author"`
	AuthorType tools.AgentType `json:"author_type"`
	Body       string          `json:"body"`
	CreatedAt  time.Time       `json:"created_at"`
}

// addComment stores a comment by the caller on task t.
func addComment(c *tools.Call, t Task, kind, body string) (Comment, error) {
	tx := c.Tx
	m := Comment{ID: tx.NewID("c"), TaskID: t.ID, Kind: kind, Author: c.Caller.ID, AuthorType: c.Caller.Type, Body: body, CreatedAt: tx.Now()}
	return m, tx.Put(commentPath(t.ID, m.ID), m)
}

// taskComments lists a task's comments, oldest first.
func taskComments(tx *gitstate.Tx, taskID string) ([]Comment, error) {
	out := []Comment{}
	err := tools.WalkJSON(tx, dirComments+"/"+taskID, func(m Comment) { out = append(out, m) })
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, err
}

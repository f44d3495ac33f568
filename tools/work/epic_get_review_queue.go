package work

import (
	"context"
	"sort"
	"time"

	"github.com/gitcodex/git-codex/tools"
)

// EpicQueueIn is epic_get_review_queue's input.
type EpicQueueIn struct {
	EpicID string `json:"epic_id,omitempty" jsonschema:"the epic (default: the newest epic in progress that you run)"`
}

// QueueEntry is one task waiting for review.
type QueueEntry struct {
	Position    int        `json:"position" jsonschema:"1 for the task submitted first"`
	TaskID      string     `json:"task_id"`
	Title       string     `json:"title"`
	Holder      string     `json:"holder" jsonschema:"the worker whose work it is"`
	PRNumber    int        `json:"pr_number,omitempty"`
	PRURL       string     `json:"pr_url,omitempty"`
	Branch      string     `json:"branch,omitempty" jsonschema:"the pull request's branch"`
	SubmittedAt *time.Time `json:"submitted_at"`
}

// ReviewQueue is what epic_get_review_queue returns.
type ReviewQueue struct {
	EpicID string       `json:"epic_id"`
	Count  int          `json:"count"`
	Queue  []QueueEntry `json:"queue"`
}

// submittedAt is when a task went to review: its submission, else its
// last change.
func submittedAt(t Task) time.Time {
	if t.SubmittedAt != nil {
		return *t.SubmittedAt
	}
	return t.UpdatedAt
}

// EpicGetReviewQueue lists an epic's tasks waiting for review.
var EpicGetReviewQueue = tools.Define("epic_get_review_queue", "epic.get_review_queue",
	"List an epic's tasks in REVIEW with their pull requests, in the order they were submitted (position 1 first): the supervisor's review queue. Without epic_id: the newest epic in progress that you run.",
	tools.CLI{Path: "epic queue"},
	func(ctx context.Context, c *tools.Call, in EpicQueueIn) (ReviewQueue, error) {
		e, err := epicFor(c, in.EpicID)
		if err != nil {
			return ReviewQueue{}, err
		}
		tasks, err := epicTasks(c.Tx, e.ID, TaskReview)
		if err != nil {
			return ReviewQueue{}, err
		}
		sort.SliceStable(tasks, func(i, j int) bool {
			a, b := submittedAt(tasks[i]), submittedAt(tasks[j])
			if !a.Equal(b) {
				return a.Before(b)
			}
			return tasks[i].ID < tasks[j].ID
		})
		out := ReviewQueue{EpicID: e.ID, Queue: []QueueEntry{}}
		for i, t := range tasks {
			at := submittedAt(t)
			q := QueueEntry{Position: i + 1, TaskID: t.ID, Title: t.Title, Holder: holderOf(t), SubmittedAt: &at}
			if t.PR != nil {
				q.PRNumber, q.PRURL, q.Branch = t.PR.Number, t.PR.URL, t.PR.Head
			}
			out.Queue = append(out.Queue, q)
		}
		out.Count = len(out.Queue)
		c.Target(e.ID)
		c.Summarize("%s looked at the review queue of epic %s: %d task(s)", c.Caller.ID, e.ID, out.Count)
		return out, nil
	}).Hint(tools.Hints{ReadOnly: true, Idempotent: true})

package work

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/mail"
)

// TaskIDIn names one task.
type TaskIDIn struct {
	TaskID string `json:"task_id" jsonschema:"the task's id"`
}

// Approved is what epic_approve_pr returns.
type Approved struct {
	TaskID         string   `json:"task_id"`
	PRNumber       int      `json:"pr_number"`
	PRURL          string   `json:"pr_url"`
	Merged         bool     `json:"merged"`
	MergeCommit    string   `json:"merge_commit,omitempty" jsonschema:"the squashed commit on the epic's branch"`
	State          string   `json:"state" jsonschema:"the task's state: COMPLETED once merged"`
	RebaseRequests []string `json:"rebase_requests" jsonschema:"the workers told to rebase: each has a pull request pending on the epic"`
	Message        string   `json:"message"`
}

// EpicApprovePR merges a task's pull request and completes the task.
var EpicApprovePR = tools.Define("epic_approve_pr", "epic.approve_pr",
	"Approve a task in REVIEW: squash-merge its pull request into the epic's branch, task COMPLETED, other pending workers mailed to rebase. "+
		"If GitHub fails the task stays in REVIEW; approving again never merges twice.",
	tools.CLI{Path: "epic approve", Args: []string{"task_id"}},
	func(ctx context.Context, c *tools.Call, in TaskIDIn) (*Approved, error) {
		t, e, err := reviewedTask(c, in.TaskID, "epic_approve_pr")
		if err != nil {
			return nil, err
		}
		if t.PR == nil || t.PR.Number == 0 {
			return nil, tools.Errorf(tools.InvalidInput, "task %s has no pull request to merge; its holder opens one with create_pull_request (or complete it with `git codex task status %s COMPLETED`)", t.ID, t.ID).
				With("task_id", t.ID)
		}
		out := &Approved{TaskID: t.ID, PRNumber: t.PR.Number, PRURL: t.PR.URL, State: t.State, RebaseRequests: []string{}}
		c.Target(t.ID)
		c.Summarize("%s approves task %s: merging pull request #%d into %s", c.Caller.ID, t.ID, t.PR.Number, e.Branch)
		c.After(func(ctx context.Context, f *tools.Followup) error {
			// one approval of a task at a time: two at once would both
			// find the pull request open and both merge it
			release, err := f.Store.HoldWork("approve-" + t.ID)
			if err != nil {
				return recordForgeFailure(ctx, f, t.ID, tools.Errorf(tools.LockDenied, "task %s's pull request is being merged by another call; see the task in a moment", t.ID).With("task_id", t.ID))
			}
			defer release()
			var sha string
			err = withForge(ctx, f, t.ID, func(gh tools.GitHub) (err error) {
				sha, err = mergePR(ctx, gh, t.PR.Number)
				return err
			})
			if err != nil {
				return recordForgeFailure(ctx, f, t.ID, err)
			}
			return f.Record(ctx, func(rc *tools.Call) error {
				return completeApproved(rc, t.ID, sha, out)
			})
		})
		return out, nil
	})

// mergePR squash-merges pull request n, unless it is merged already (an
// approval retried after GitHub merged it but before the outcome was
// recorded): nothing is merged twice.
func mergePR(ctx context.Context, gh tools.GitHub, n int) (string, error) {
	pr, err := gh.GetPullRequest(ctx, n)
	if err != nil {
		return "", err
	}
	if pr.Merged {
		return "", nil
	}
	if pr.State == "closed" {
		return "", tools.Errorf(tools.GitHubRefused, "pull request #%d is closed without being merged; reopen it on GitHub, or request changes", n).With("pr_number", n)
	}
	return gh.MergePullRequest(ctx, n, "squash")
}

// completeApproved records a merged pull request: its task COMPLETED and
// the rebase mails.
func completeApproved(c *tools.Call, id, sha string, out *Approved) error {
	tx := c.Tx
	t, err := getTask(tx, id)
	if err != nil {
		return err
	}
	e, err := getEpic(tx, t.EpicID)
	if err != nil {
		return err
	}
	c.Target(t.ID)
	out.Merged, out.MergeCommit = true, sha
	if t.PR != nil {
		t.PR.Merged, t.PR.State = true, "closed"
	}
	if !taskFinal(t.State) {
		t.State = TaskCompleted
		if err := noteHeld(c, holderOf(t), t.ID, false); err != nil {
			return err
		}
	}
	out.State = t.State
	t.UpdatedAt, t.UpdatedBy, t.Clock = tx.Now(), c.Caller.ID, tx.Clock()
	if err := tx.Put(taskPath(t.ID), t); err != nil {
		return err
	}
	pending, err := pendingPRs(tx, e.ID, t.ID)
	if err != nil {
		return err
	}
	for _, holder := range sortedKeys(pending) {
		var b strings.Builder
		fmt.Fprintf(&b, "Pull request #%d (task %s: %s) was merged into %s", out.PRNumber, t.ID, t.Title, e.Branch)
		if sha != "" {
			fmt.Fprintf(&b, " as %s", sha)
		}
		b.WriteString(".\n\nRebase your work onto it and push, so that your pull request merges cleanly:\n\n")
		for _, p := range pending[holder] {
			fmt.Fprintf(&b, "- task %s: %s (pull request #%d, branch %s)\n", p.ID, p.Title, p.PR.Number, p.PR.Head)
		}
		fmt.Fprintf(&b, "\n    git fetch origin && git rebase origin/%s && git push --force-with-lease\n", e.Branch)
		if _, err := mail.Post(c, holder, "Rebase Required: "+mail.OneLineCut(e.Title), b.String(), ""); err != nil {
			return err
		}
		out.RebaseRequests = append(out.RebaseRequests, holder)
	}
	out.Message = fmt.Sprintf("pull request #%d merged; task %s is %s; %d rebase request(s) sent", out.PRNumber, t.ID, t.State, len(out.RebaseRequests))
	c.Summarize("%s merged pull request #%d of task %s; %d rebase request(s)", c.Caller.ID, out.PRNumber, t.ID, len(out.RebaseRequests))
	return nil
}

// pendingPRs are the epic's other tasks whose pull requests are open
// (submitted, or sent back for changes), by holder.
func pendingPRs(tx *gitstate.Tx, epicID, except string) (map[string][]Task, error) {
	out := map[string][]Task{}
	err := tools.WalkJSON(tx, dirTasks, func(t Task) {
		if t.EpicID == epicID && t.ID != except && t.PR != nil && !t.PR.Merged && t.PR.State != "closed" &&
			(t.State == TaskReview || t.State == TaskInProgress) && holderOf(t) != "" {
			out[holderOf(t)] = append(out[holderOf(t)], t)
		}
	})
	return out, err
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

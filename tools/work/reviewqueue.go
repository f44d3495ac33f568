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
	"github.com/gitcodex/git-codex/tools/forge"
	"github.com/gitcodex/git-codex/tools/mail"
)

// The review queue of an epic (seed 003): its tasks in REVIEW with their
// pull requests, oldest submission first. The supervisor approves one
// (its pull request is squash-merged into the epic's branch, the task is
// COMPLETED, and every worker with a pull request still pending on the
// epic is told to rebase) or requests changes (the feedback is mailed and
// kept as a comment, the task goes back to IN_PROGRESS). GitHub is called
// only after the call's commit (Call.After): the intent is the call's
// audit commit, the outcome one more commit; a failed call to GitHub
// leaves the task as it was, with the failure in the audit trail.

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

// reviewedTask reads a task the caller reviews in its epic: it must be in
// an epic the caller may run, and in REVIEW.
func reviewedTask(c *tools.Call, id, what string) (Task, Epic, error) {
	t, err := getTask(c.Tx, id)
	if err != nil {
		return Task{}, Epic{}, err
	}
	if t.EpicID == "" {
		return Task{}, Epic{}, tools.Errorf(tools.InvalidInput, "task %s belongs to no epic; %s works on an epic's tasks (task_update_status moves any task)", t.ID, what).With("task_id", t.ID)
	}
	e, err := getEpic(c.Tx, t.EpicID)
	if err != nil {
		return Task{}, Epic{}, err
	}
	if err := mayRunEpic(c, e, "review its tasks"); err != nil {
		return Task{}, Epic{}, err
	}
	if t.State != TaskReview {
		return Task{}, Epic{}, tools.Errorf(tools.InvalidInput, "task %s is %s, not in REVIEW; see the queue with `git codex epic queue`", t.ID, t.State).
			With("task_id", t.ID).With("state", t.State)
	}
	return t, e, nil
}

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

// EpicRequestChangesIn is epic_request_changes's input.
type EpicRequestChangesIn struct {
	TaskID   string `json:"task_id" jsonschema:"the task's id"`
	Feedback string `text:"multiline" json:"feedback" jsonschema:"what to change, specifically"`
}

// ChangesRequested is what epic_request_changes returns.
type ChangesRequested struct {
	TaskID    string `json:"task_id"`
	State     string `json:"state"`
	Holder    string `json:"holder"`
	MailID    string `json:"mail_id"`
	CommentID string `json:"comment_id"`
	Message   string `json:"message"`
}

// EpicRequestChanges sends a task in REVIEW back with feedback.
var EpicRequestChanges = tools.Define("epic_request_changes", "epic.request_changes",
	"Send a task in REVIEW back to its worker: the feedback is mailed to it and kept as a comment on the task (agent_get_task shows it), and the task is IN_PROGRESS again. "+
		"The worker pushes fixes to the same pull request and moves the task to REVIEW again.",
	tools.CLI{Path: "epic request-changes", Args: []string{"task_id", "feedback"}},
	func(ctx context.Context, c *tools.Call, in EpicRequestChangesIn) (ChangesRequested, error) {
		t, _, err := reviewedTask(c, in.TaskID, "epic_request_changes")
		if err != nil {
			return ChangesRequested{}, err
		}
		if err := mail.CheckText(c.Config, "task_id", t.ID, "feedback", in.Feedback); err != nil {
			return ChangesRequested{}, err
		}
		holder := holderOf(t)
		if holder == "" {
			return ChangesRequested{}, tools.Errorf(tools.InvalidInput, "task %s is in REVIEW but nobody holds it; assign it with `git codex task assign`", t.ID).With("task_id", t.ID)
		}
		tx := c.Tx
		cm, err := addComment(c, t, CommentChangesRequested, in.Feedback)
		if err != nil {
			return ChangesRequested{}, err
		}
		body := in.Feedback + "\n\n" + c.Caller.ID + " requested changes on task " + t.ID + " (" + t.Title + ")"
		if t.PR != nil {
			body += fmt.Sprintf(", pull request #%d", t.PR.Number)
		}
		body += ". It is IN_PROGRESS again: push your fixes to the same branch, then `git codex task status " + t.ID + " REVIEW`."
		m, err := mail.Post(c, holder, "Changes requested: "+mail.OneLineCut(t.Title), body, "")
		if err != nil {
			return ChangesRequested{}, err
		}
		t.State = TaskInProgress
		t.UpdatedAt, t.UpdatedBy, t.Clock = tx.Now(), c.Caller.ID, tx.Clock()
		if err := tx.Put(taskPath(t.ID), t); err != nil {
			return ChangesRequested{}, err
		}
		c.Target(t.ID)
		c.Summarize("%s requested changes on task %s", c.Caller.ID, t.ID)
		return ChangesRequested{
			TaskID: t.ID, State: t.State, Holder: holder, MailID: m.ID, CommentID: cm.ID,
			Message: "feedback sent to " + holder + "; task " + t.ID + " is IN_PROGRESS again",
		}, mail.TouchAgent(c)
	})

// EpicPRIn is epic_create_epic_pr's input.
type EpicPRIn struct {
	EpicID      string `json:"epic_id,omitempty" jsonschema:"the epic (default: the newest epic in progress that you run)"`
	Title       string `json:"title,omitempty" jsonschema:"the pull request's title (default: [Epic] and the epic's title)"`
	Description string `text:"multiline" json:"description,omitempty" jsonschema:"its body (default: the epic's description and its tasks)"`
}

// EpicPR is what epic_create_epic_pr returns.
type EpicPR struct {
	EpicID   string `json:"epic_id"`
	PRNumber int    `json:"pr_number"`
	PRURL    string `json:"pr_url"`
	Branch   string `json:"branch"`
	Base     string `json:"base"`
	State    string `json:"state" jsonschema:"the epic's state: COMPLETED once its pull request is open"`
	Message  string `json:"message"`
}

// EpicCreateEpicPR opens the epic's pull request once its work is done.
var EpicCreateEpicPR = tools.Define("epic_create_epic_pr", "epic.create_epic_pr",
	"Open the epic's pull request, from its branch into the default branch (or the epic's base branch), once every task is COMPLETED or CANCELLED; the epic becomes COMPLETED and the people are mailed to review it. "+
		"Calling it again finds the pull request already made.",
	tools.CLI{Path: "epic pr"},
	func(ctx context.Context, c *tools.Call, in EpicPRIn) (*EpicPR, error) {
		e, err := epicFor(c, in.EpicID)
		if err != nil {
			return nil, err
		}
		if err := mayRunEpic(c, e, "open its pull request"); err != nil {
			return nil, err
		}
		c.Target(e.ID)
		if e.PR != nil {
			c.Summarize("%s asked for epic %s's pull request: #%d is open", c.Caller.ID, e.ID, e.PR.Number)
			return &EpicPR{EpicID: e.ID, PRNumber: e.PR.Number, PRURL: e.PR.URL, Branch: e.Branch, Base: e.PR.Base, State: e.State,
				Message: "the epic's pull request was opened already"}, nil
		}
		tasks, err := epicTasks(c.Tx, e.ID, "")
		if err != nil {
			return nil, err
		}
		var open []string
		completed := 0
		for _, t := range tasks {
			switch t.State {
			case TaskCompleted:
				completed++
			case TaskCancelled:
			default:
				open = append(open, t.ID+" ("+t.State+")")
			}
		}
		if len(open) > 0 {
			return nil, tools.Errorf(tools.InvalidInput, "epic %s has %d task(s) not done: %s; approve or cancel them first", e.ID, len(open), strings.Join(open, ", ")).
				With("epic_id", e.ID).With("open_tasks", open)
		}
		if completed == 0 {
			return nil, tools.Errorf(tools.InvalidInput, "epic %s has no completed task: nothing to merge", e.ID).With("epic_id", e.ID)
		}
		np := tools.NewPullRequest{Title: in.Title, Body: in.Description, Head: e.Branch, Base: e.BaseBranch}
		if strings.TrimSpace(np.Title) == "" {
			np.Title = "[Epic] " + e.Title
		}
		if strings.TrimSpace(np.Body) == "" {
			np.Body = epicPRBody(e, tasks)
		}
		out := &EpicPR{EpicID: e.ID, Branch: e.Branch, State: e.State}
		c.Summarize("%s opens epic %s's pull request: %s", c.Caller.ID, e.ID, e.Branch)
		c.After(func(ctx context.Context, f *tools.Followup) error {
			var pr tools.PullRequest
			err := withForge(ctx, f, e.ID, func(gh tools.GitHub) (err error) {
				pr, err = openEpicPR(ctx, f.Repo, gh, np)
				return err
			})
			if err != nil {
				return recordForgeFailure(ctx, f, e.ID, err)
			}
			return f.Record(ctx, func(rc *tools.Call) error {
				return completeEpic(rc, e.ID, pr, out)
			})
		})
		return out, nil
	})

// epicPRBody is the default body of an epic's pull request: its
// description and its tasks.
func epicPRBody(e Epic, tasks []Task) string {
	var b strings.Builder
	b.WriteString(e.Description)
	b.WriteString("\n\nTasks:\n")
	for _, t := range tasks {
		fmt.Fprintf(&b, "- %s %s (%s)", t.ID, t.Title, t.State)
		if t.PR != nil && t.PR.URL != "" {
			fmt.Fprintf(&b, " %s", t.PR.URL)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// openEpicPR opens the epic's pull request, or finds the one a retried
// call already opened.
func openEpicPR(ctx context.Context, st tools.CodeRepo, gh tools.GitHub, np tools.NewPullRequest) (tools.PullRequest, error) {
	if np.Base == "" {
		b, err := gh.DefaultBranch(ctx)
		if err != nil {
			return tools.PullRequest{}, err
		}
		np.Base = b
	}
	if err := forge.PublishBranches(ctx, st, np.Head); err != nil {
		return tools.PullRequest{}, err
	}
	if pr, ok, err := gh.FindPullRequest(ctx, np.Head, np.Base); err != nil || ok {
		return pr, err
	}
	return gh.CreatePullRequest(ctx, np)
}

// completeEpic records an epic's pull request: the epic is COMPLETED and
// the people are asked to review it.
func completeEpic(c *tools.Call, id string, pr tools.PullRequest, out *EpicPR) error {
	tx := c.Tx
	e, err := getEpic(tx, id)
	if err != nil {
		return err
	}
	now := tx.Now()
	e.PR, e.State, e.CompletedAt = &pr, EpicCompleted, &now
	e.UpdatedAt, e.UpdatedBy, e.Clock = now, c.Caller.ID, tx.Clock()
	if err := tx.Put(epicPath(e.ID), e); err != nil {
		return err
	}
	body := fmt.Sprintf("Epic %s (%s) is done: its pull request #%d from %s into %s is ready for review:\n\n%s\n", e.ID, e.Title, pr.Number, pr.Head, pr.Base, pr.URL)
	if _, err := mail.Post(c, tools.HumanInbox, "Epic ready for review: "+mail.OneLineCut(e.Title), body, ""); err != nil {
		return err
	}
	out.PRNumber, out.PRURL, out.Base, out.State = pr.Number, pr.URL, pr.Base, e.State
	out.Message = "epic pull request opened; the people were asked to review it"
	c.Target(e.ID)
	c.Summarize("%s opened epic %s's pull request #%d", c.Caller.ID, e.ID, pr.Number)
	return nil
}

// withForge opens GitHub for an after-step (forge.OpenGitHub, with the
// settings in force) and runs op, trying again while it fails transiently
// (no answer, a server error, a rate limit) as GitHub calls do, by the
// same retry policy (retry.*: tries, waits doubling up to
// retry.max_delay_ms with jitter, no sooner than a rate limit's reset);
// each failed try is one audit commit on target. Its error is the last
// failure, coded (forgeError).
func withForge(ctx context.Context, f *tools.Followup, target string, op func(tools.GitHub) error) error {
	cfg, err := f.Config(ctx)
	if err != nil {
		return err
	}
	gh, ge := forge.OpenGitHub(ctx, f, cfg)
	if ge != nil {
		return forgeError(ge)
	}
	pol := tools.RetryPolicyOf(cfg)
	done := pol.Do(ctx, func(int) error { return op(gh) }, forge.Verdict, func(try int, err error, wait time.Duration) {
		ge := forge.AsGitHubError(err)
		tryErr := tools.Errorf(tools.TransientError, "try %d of %d failed: %s; trying again in %s", try, pol.Attempts, ge.Message, wait.Round(time.Millisecond)).
			With("attempt", try).With("status", ge.Status)
		_ = f.Record(ctx, func(c *tools.Call) error {
			c.Target(target)
			return tryErr
		})
	})
	switch {
	case done.Interrupted != nil:
		return forgeError(&tools.GitHubError{Message: "cancelled while waiting to try again: " + done.Interrupted.Error()})
	case done.GaveUp:
		return forgeError(done.Err).With("attempts", done.Tries)
	}
	return forgeErrorOrNil(done.Err)
}

// forgeErrorOrNil is forgeError for a failure, nil for none.
func forgeErrorOrNil(err error) error {
	if err == nil {
		return nil
	}
	return forgeError(err)
}

// forgeError gives a failed GitHub call its code: GITHUB_UNAVAILABLE when
// GitHub could not be reached (or no token or repository was found),
// TRANSIENT_ERROR for a server error or rate limit, GITHUB_REFUSED for any
// other refusal.
func forgeError(err error) *tools.Error {
	var te *tools.Error
	if errors.As(err, &te) {
		return te
	}
	var ge *tools.GitHubError
	if !errors.As(err, &ge) {
		return tools.Errorf(tools.GitHubUnavailable, "GitHub: %v; nothing changed, call again", err)
	}
	switch {
	case ge.Status == 0:
		return tools.Errorf(tools.GitHubUnavailable, "GitHub could not be reached: %s; nothing changed, call again once it can be", ge.Message)
	case ge.Transient():
		e := tools.Errorf(tools.TransientError, "GitHub answered %d: %s; nothing changed, call again later", ge.Status, ge.Message).With("status", ge.Status)
		if !ge.RetryAt.IsZero() {
			e = e.With("retry_at", ge.RetryAt.UTC().Format(time.RFC3339))
		}
		return e
	}
	return tools.Errorf(tools.GitHubRefused, "GitHub refused (%d): %s", ge.Status, ge.Message).With("status", ge.Status)
}

// recordForgeFailure puts a failed GitHub call in the audit trail (a
// commit with its Codex-Error that changes nothing) and returns it as the
// call's error.
func recordForgeFailure(ctx context.Context, f *tools.Followup, target string, err error) error {
	e := forgeError(err)
	if rerr := f.Record(ctx, func(c *tools.Call) error {
		c.Target(target)
		c.Summarize("%s: GitHub failed: %s", f.Caller.ID, mail.OneLineCut(e.Message))
		return e
	}); rerr != nil && tools.AsError(rerr).Code != e.Code {
		return rerr
	}
	return e
}

package work

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/repo"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/forge"
	"github.com/gitcodex/git-codex/tools/instance"
	"github.com/gitcodex/git-codex/tools/mail"
	"github.com/gitcodex/git-codex/tools/review"
)

// ReviewFetcher delivers GitHub reviews for one watcher (or one
// github_reviews call). A pass reads the state for the pull requests
// instances opened, asks GitHub for their reviews (outside any lock), and
// for each submitted review not yet delivered: claims it in one
// transaction, commits REVIEW_FEEDBACK.md on the instance's branch and
// notes it on the reviewed commit (outside the lock), and records the
// outcome in another. The wake-up is the watcher's: delivered feedback is
// an arrival (wake.go).
type ReviewFetcher struct {
	Store  *gitstate.Store
	Env    tools.Env
	Keys   *tools.ConfigKeys // the settings table (Registry.ConfigKeys)
	Caller tools.Caller      // the person the watcher acts for
	// Holder names this fetcher in claims: watch:<host>:<pid>.
	Holder string
	// Report is told of every review delivered (nil: nobody).
	Report func(ReviewEvent)
	// Backoff makes a review whose delivery failed wait before it is
	// tried again: a minute after the first failure, doubling up to an
	// hour (the watcher's pace); without it every pass tries (by hand).
	// It also keeps a pass from asking GitHub before a rate limit it
	// reported resets.
	Backoff bool

	notBefore time.Time // GitHub's rate limit resets then
}

// ReviewEvent is one review delivered, for the watcher's terminal.
type ReviewEvent struct {
	Review GitHubReview
}

// reviewTarget is a pull request an instance opened, whose reviews go to
// that instance.
type reviewTarget struct {
	pr    tools.PullRequest
	repo  string
	coder tools.Agent
	task  string
}

// errNoReview aborts a claim's transaction without a commit: the review
// was delivered or claimed meanwhile, or its instance ended.
var errNoReview = errors.New("nothing to deliver")

// Pass runs one round and returns the reviews delivered. Its error says
// why GitHub could not be asked (GITHUB_UNAVAILABLE, GITHUB_REFUSED,
// TRANSIENT_ERROR), or that a delivery could not be recorded; a review
// that could not be committed is recorded failed and tried again on the
// next pass.
func (r *ReviewFetcher) Pass(ctx context.Context) ([]GitHubReview, error) {
	var targets []reviewTarget
	known := map[int64]GitHubReview{}
	var cfg *tools.Config
	err := r.Store.View(ctx, func(sn *gitstate.Snapshot) error {
		if sn.Commit() == "" {
			return nil
		}
		var err error
		if cfg, err = tools.LoadConfig(sn, r.Keys); err != nil {
			return err
		}
		if targets, err = reviewTargets(sn, r.Store.GitDir()); err != nil {
			return err
		}
		return walkRecords(sn, dirGitHubReviews, func(g GitHubReview) { known[g.ReviewID] = g })
	})
	if err != nil {
		return nil, tools.StoreError(err)
	}
	if len(targets) == 0 || (r.Backoff && time.Now().Before(r.notBefore)) {
		return nil, nil
	}
	f := &tools.Followup{Env: r.Env, Store: r.Store, Caller: r.Caller} // forge.OpenGitHub reads its Env and Store
	gh, gerr := forge.OpenGitHub(ctx, f, cfg)
	if gerr != nil {
		return nil, forge.Unavailable(gerr)
	}
	lister, ok := gh.(tools.GitHubReviews)
	if !ok {
		return nil, tools.Errorf(tools.GitHubUnavailable, "this git codex's GitHub client cannot list reviews")
	}
	var out []GitHubReview
	var first error
	for _, t := range targets {
		if t.repo != "" && !strings.EqualFold(t.repo, gh.Repo()) {
			continue // another repository's pull request
		}
		reviews, err := lister.ListReviews(ctx, t.pr.Number)
		if err != nil {
			first = cmp(first, listError(err, t.pr.Number))
			if r.rateLimited(err) {
				break
			}
			continue
		}
		var due []tools.PRReview
		for _, rv := range reviews {
			k, seen := known[rv.ID]
			if !deliverable(rv) || (seen && (k.Delivery == "delivered" || (k.Claim != nil && r.Store.WorkHeld(k.Claim.Mark)))) {
				continue
			}
			if seen && r.Backoff && k.Delivery == "failed" && time.Since(k.UpdatedAt) < retryWait(k.Attempts) {
				continue
			}
			due = append(due, rv)
		}
		if len(due) == 0 {
			continue
		}
		comments, err := lister.ListReviewComments(ctx, t.pr.Number)
		if err != nil {
			first = cmp(first, listError(err, t.pr.Number))
			if r.rateLimited(err) {
				break
			}
			continue
		}
		for _, rv := range due {
			var mine []tools.PRReviewComment
			for _, c := range comments {
				if c.ReviewID == rv.ID {
					mine = append(mine, c)
				}
			}
			g, err := r.deliver(ctx, t, rv, mine)
			if err != nil {
				first = cmp(first, err)
				continue
			}
			if g != nil {
				out = append(out, *g)
			}
		}
	}
	return out, first
}

// rateLimited notes when a rate limit GitHub reported resets, and
// reports whether it did: the pass stops asking.
func (r *ReviewFetcher) rateLimited(err error) bool {
	var ge *tools.GitHubError
	if !errors.As(err, &ge) || ge.RetryAt.IsZero() {
		return false
	}
	r.notBefore = ge.RetryAt
	return true
}

// retryWait is how long a failed delivery waits after attempt n: a
// minute, doubling with every attempt, up to an hour.
func retryWait(n int) time.Duration {
	return min(time.Minute<<min(max(n-1, 0), 6), time.Hour)
}

// cmp keeps the first error.
func cmp(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// listError is a failed listing as the call's error.
func listError(err error, pr int) error {
	var ge *tools.GitHubError
	if !errors.As(err, &ge) {
		return tools.AsError(err)
	}
	var e *tools.Error
	switch {
	case ge.Status == 0:
		e = tools.Errorf(tools.GitHubUnavailable, "%s; the reviews are fetched again on the next pass", ge.Message)
	case ge.Transient():
		e = tools.Errorf(tools.TransientError, "%s; the reviews are fetched again on the next pass", ge.Message)
	default:
		e = forge.Refused(ge)
	}
	if !ge.RetryAt.IsZero() {
		e = e.With("retry_at", ge.RetryAt.UTC().Format(time.RFC3339))
	}
	return e.With("pr_number", pr)
}

// reviewTargets lists the pull requests whose reviews this clone
// delivers: opened by create_pull_request (DONE), of an instance that is
// live, whose worktree is this clone's (its branch is here to commit on),
// and whose task, if any, is not over, or was completed by an approval of
// that pull request (a later changes request reopens it).
func reviewTargets(src recordSource, gitDir string) ([]reviewTarget, error) {
	var calls []forge.GitHubCall
	err := walkRecords(src, forge.Dir, func(g forge.GitHubCall) {
		if g.Op == forge.OpCreatePR && g.State == forge.GitHubDone && g.PR != nil && g.PR.Number > 0 && !g.PR.Merged {
			calls = append(calls, g)
		}
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(calls, func(i, j int) bool { return calls[i].ID < calls[j].ID })
	seen := map[string]bool{}
	var out []reviewTarget
	var approvals map[string]GitHubReview // read once, when a task is over
	for _, g := range calls {
		key := g.Repo + "#" + strconv.Itoa(g.PR.Number)
		if seen[key] {
			continue
		}
		owner := g.Caller
		if g.For != "" {
			owner = g.For
		}
		var a tools.Agent
		if err := src.Get(tools.AgentPath(owner), &a); err != nil {
			continue // a person's pull request: nobody to deliver to
		}
		if a.Status == "" || instance.Final(a.Status) || a.CleanedAt != nil || a.Worktree == "" || a.Branch == "" || !instance.WorktreeHere(a.Worktree, gitDir) {
			continue
		}
		if _, err := os.Stat(a.Worktree); err != nil {
			continue
		}
		if g.Task != "" {
			var t Task
			if err := src.Get(taskPath(g.Task), &t); err == nil && taskFinal(t.State) {
				if approvals == nil {
					if approvals, err = approvalsOf(src); err != nil {
						return nil, err
					}
				}
				if _, ok := approvals[approvalKey(g.Task, g.Repo, g.PR.Number)]; !ok || t.State != TaskCompleted || holderOf(t) != a.ID {
					continue
				}
			}
		}
		seen[key] = true
		out = append(out, reviewTarget{pr: *g.PR, repo: g.Repo, coder: a, task: g.Task})
	}
	return out, nil
}

// deliver delivers one review: claim, commit and note, outcome. It
// returns nil, nil when another watcher has it.
func (r *ReviewFetcher) deliver(ctx context.Context, t reviewTarget, rv tools.PRReview, comments []tools.PRReviewComment) (*GitHubReview, error) {
	id := githubReviewID(rv.ID)
	mark := "ghreview-" + id + "-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.Itoa(os.Getpid())
	release, err := r.Store.HoldWork(mark)
	if err != nil {
		return nil, nil
	}
	defer release()
	// the commit it was made on, when this clone has it; else the tip
	reviewed, err := tools.CodeRepoOf(r.Store).RevParse(ctx, rv.CommitID)
	if rv.CommitID == "" || err != nil {
		if reviewed, err = tools.CodeRepoOf(r.Store).RevParse(ctx, "refs/heads/"+t.coder.Branch); err != nil {
			return nil, nil // the branch is gone: nothing to commit on
		}
	}
	var rec GitHubReview
	var fb review.Feedback
	err = r.record(ctx, func(c *tools.Call) error {
		cur, found, err := getGitHubReview(c.Tx, id)
		if err != nil {
			return err
		}
		if found && (cur.Delivery == "delivered" || (cur.Claim != nil && c.Repo.WorkHeld(cur.Claim.Mark))) {
			return errNoReview
		}
		coder, err := tools.GetAgent(c.Tx, t.coder.ID)
		if err != nil || instance.Final(coder.Status) || coder.CleanedAt != nil {
			return errNoReview
		}
		now := c.Tx.Now()
		if !found {
			cur = GitHubReview{ID: id, ReviewID: rv.ID, FeedbackID: c.Tx.NewID("f"), CreatedAt: now}
		}
		cur.Repo, cur.PR, cur.Coder, cur.Task = t.repo, t.pr.Number, coder.ID, t.task
		cur.State, cur.User, cur.URL, cur.CommitID, cur.SubmittedAt, cur.Comments = rv.State, rv.User, rv.URL, rv.CommitID, rv.SubmittedAt, len(comments)
		cur.Delivery, cur.Why = "claimed", ""
		cur.Attempts++
		cur.Claim = &ReviewClaim{Holder: r.Holder, Mark: mark, At: now}
		cur.UpdatedAt, cur.UpdatedBy, cur.Clock = now, c.Caller.ID, c.Tx.Clock()
		if err := c.Tx.Get(review.FeedbackPath(cur.FeedbackID), &fb); err != nil {
			if !errors.Is(err, gitstate.ErrNotFound) {
				return err
			}
			text, items := githubFeedback(rv, t.pr.Number, comments)
			fb = review.Feedback{ID: cur.FeedbackID, Reviewer: review.GitHubReviewer + rv.User, Coder: coder.ID, Type: feedbackType(rv), Items: items, Text: text,
				ReviewedCommit: reviewed, Delivery: "pending", CreatedAt: now, UpdatedAt: now, UpdatedBy: c.Caller.ID, Clock: c.Tx.Clock()}
			if err := c.Tx.Put(review.FeedbackPath(fb.ID), fb); err != nil {
				return err
			}
		}
		rec = cur
		c.Target(id)
		c.Summarize("%s claims GitHub review %d (%s by @%s) of pull request #%d for %s", r.Holder, rv.ID, rv.State, rv.User, t.pr.Number, coder.ID)
		return c.Tx.Put(githubReviewPath(id), cur)
	})
	if errors.Is(err, errNoReview) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// outside the lock: the commit (or the one a watcher killed after
	// making it left), then the note (unless it is there)
	commit, derr := r.commitFeedback(ctx, t, rec, fb)
	if derr == nil {
		derr = r.noteOnce(ctx, fb, rec)
	}
	err = r.record(ctx, func(c *tools.Call) error {
		cur, found, err := getGitHubReview(c.Tx, id)
		if err != nil {
			return err
		}
		if !found { // kept records are never removed, even by a sync
			return fmt.Errorf("github review %s: its record is gone", id)
		}
		now := c.Tx.Now()
		cur.Claim, cur.UpdatedAt, cur.UpdatedBy, cur.Clock = nil, now, c.Caller.ID, c.Tx.Clock()
		c.Target(id)
		if derr != nil {
			cur.Delivery, cur.Why, cur.Commit = "failed", derr.Error(), commit
			c.Summarize("GitHub review %d of pull request #%d could not be delivered to %s; it is tried again later", rv.ID, t.pr.Number, cur.Coder)
			c.Failed(tools.Errorf(tools.FeedbackNotDelivered, "GitHub review %d could not be committed in %s's worktree: %v", rv.ID, cur.Coder, derr).With("review_id", rv.ID))
			rec = cur
			return c.Tx.Put(githubReviewPath(id), cur)
		}
		cur.Delivery, cur.Why, cur.Commit = "delivered", "", commit
		var f review.Feedback
		if err := c.Tx.Get(review.FeedbackPath(cur.FeedbackID), &f); err != nil {
			return err
		}
		f.Delivery, f.Commit, f.DeliveryError, f.UpdatedAt, f.UpdatedBy, f.Clock = "delivered", commit, "", now, c.Caller.ID, c.Tx.Clock()
		if err := c.Tx.Put(review.FeedbackPath(f.ID), f); err != nil {
			return err
		}
		if c.Config.StringValue("github.approval_completes") == "on" {
			switch cur.State {
			case tools.ReviewApproved:
				if err := completeByApproval(c, &cur); err != nil {
					return err
				}
			case tools.ReviewChangesRequested:
				if err := sendBackByChanges(c, &cur, f); err != nil {
					return err
				}
			}
		}
		c.Summarize("GitHub review %d (%s by @%s) of pull request #%d delivered to %s as %.12s", rv.ID, cur.State, cur.User, cur.PR, cur.Coder, commit)
		if cur.Completed != "" {
			c.Summarize("GitHub review %d (APPROVED by @%s) of pull request #%d delivered to %s as %.12s; task %s COMPLETED", rv.ID, cur.User, cur.PR, cur.Coder, commit, cur.Completed)
		}
		if cur.SentBack != "" {
			c.Summarize("GitHub review %d (CHANGES_REQUESTED by @%s) of pull request #%d delivered to %s as %.12s; task %s IN_PROGRESS again", rv.ID, cur.User, cur.PR, cur.Coder, commit, cur.SentBack)
		}
		rec = cur
		return c.Tx.Put(githubReviewPath(id), cur)
	})
	if err != nil {
		return nil, err
	}
	if derr != nil {
		// recorded failed; a later pass tries again
		return nil, tools.Errorf(tools.FeedbackNotDelivered, "GitHub review %d could not be committed in %s's worktree: %v; it is tried again on a later pass", rv.ID, rec.Coder, derr).
			With("review_id", rv.ID).With("coder", rec.Coder)
	}
	if r.Report != nil {
		r.Report(ReviewEvent{Review: rec})
	}
	return &rec, nil
}

// completeByApproval completes the task an approved pull request was
// opened for: not one of an epic (epic_approve_pr merges those), not one
// that moved to another holder or ended.
func completeByApproval(c *tools.Call, rec *GitHubReview) error {
	if rec.Task == "" {
		return nil
	}
	t, err := getTask(c.Tx, rec.Task)
	if err != nil {
		return nil // the task is gone: the feedback is still delivered
	}
	holder := holderOf(t)
	if taskFinal(t.State) || t.EpicID != "" || holder != rec.Coder {
		return nil
	}
	t.State = TaskCompleted
	t.UpdatedAt, t.UpdatedBy, t.Clock = c.Tx.Now(), c.Caller.ID, c.Tx.Clock()
	if err := noteHeld(c, holder, t.ID, false); err != nil {
		return err
	}
	rec.Completed = t.ID
	return c.Tx.Put(taskPath(t.ID), t)
}

// sendBackByChanges sends the task a pull request was opened for back to
// its holder when a review requests changes, as epic_request_changes does
// (seed 003: "Task returned to IN_PROGRESS"): IN_PROGRESS from REVIEW, or
// from COMPLETED when an approval of this pull request completed it and
// this review came after that approval (an older changes request whose
// delivery was retried late does not undo it). The holder is mailed and
// the feedback kept as the task's changes_requested comment. Not a task of
// an epic (its supervisor's, epic_request_changes), nor one that moved to
// another holder or was cancelled.
func sendBackByChanges(c *tools.Call, rec *GitHubReview, fb review.Feedback) error {
	if rec.Task == "" {
		return nil
	}
	t, err := getTask(c.Tx, rec.Task)
	if err != nil {
		return nil // the task is gone: the feedback is still delivered
	}
	holder := holderOf(t)
	if t.EpicID != "" || holder != rec.Coder {
		return nil
	}
	reopened := false
	switch t.State {
	case TaskReview:
	case TaskCompleted:
		approvals, err := approvalsOf(c.Tx)
		if err != nil {
			return err
		}
		ap, ok := approvals[approvalKey(t.ID, rec.Repo, rec.PR)]
		if !ok || !reviewedAfter(*rec, ap) {
			return nil
		}
		reopened = true
	default:
		return nil // IN_PROGRESS already, or CANCELLED
	}
	if _, err := addComment(c, t, CommentChangesRequested, fb.Text); err != nil {
		return err
	}
	body := fmt.Sprintf("@%s requested changes on GitHub, pull request #%d (review %d): the review is committed on your branch as %s (feedback %s).\n\n", rec.User, rec.PR, rec.ReviewID, review.FeedbackFile, rec.FeedbackID)
	if reopened {
		body += "An earlier approval had completed task " + t.ID + " (" + t.Title + "); it is reopened: IN_PROGRESS again, yours."
	} else {
		body += "Task " + t.ID + " (" + t.Title + ") is IN_PROGRESS again."
	}
	body += " Push your fixes to the same branch, then `git codex task status " + t.ID + " REVIEW`."
	if _, err := mail.Post(c, holder, "Changes requested: "+mail.OneLineCut(t.Title), body, ""); err != nil {
		return err
	}
	t.State = TaskInProgress
	t.UpdatedAt, t.UpdatedBy, t.Clock = c.Tx.Now(), c.Caller.ID, c.Tx.Clock()
	if err := noteHeld(c, holder, t.ID, true); err != nil {
		return err
	}
	rec.SentBack = t.ID
	return c.Tx.Put(taskPath(t.ID), t)
}

// approvalsOf lists the delivered approvals that completed a task, the
// latest per task and pull request (approvalKey).
func approvalsOf(src recordSource) (map[string]GitHubReview, error) {
	out := map[string]GitHubReview{}
	err := walkRecords(src, dirGitHubReviews, func(g GitHubReview) {
		if g.Completed == "" || g.Delivery != "delivered" {
			return
		}
		k := approvalKey(g.Completed, g.Repo, g.PR)
		if cur, ok := out[k]; !ok || reviewedAfter(g, cur) {
			out[k] = g
		}
	})
	return out, err
}

func approvalKey(task, repo string, pr int) string {
	return task + " " + strings.ToLower(repo) + "#" + strconv.Itoa(pr)
}

// reviewedAfter reports whether review a was submitted after review b:
// by GitHub's submitted_at, then (the same second) by its ids, which it
// hands out in order.
func reviewedAfter(a, b GitHubReview) bool {
	if !a.SubmittedAt.Equal(b.SubmittedAt) {
		return a.SubmittedAt.After(b.SubmittedAt)
	}
	return a.ReviewID > b.ReviewID
}

// commitFeedback commits REVIEW_FEEDBACK.md on the coder's branch, unless
// a commit for this review is on it already (a watcher killed after
// making it, before recording it).
func (r *ReviewFetcher) commitFeedback(ctx context.Context, t reviewTarget, rec GitHubReview, fb review.Feedback) (string, error) {
	trailer := reviewTrailer(rec.Repo, rec.PR, rec.ReviewID)
	cmd := exec.CommandContext(ctx, "git", "--git-dir", r.Store.GitDir(), "log", "-1", "--format=%H", "--fixed-strings", "--grep="+trailer, "refs/heads/"+t.coder.Branch, "--")
	if out, err := cmd.Output(); err == nil && len(strings.TrimSpace(string(out))) >= 40 {
		return strings.TrimSpace(string(out)), nil
	}
	msg := fmt.Sprintf("Review feedback (%s) from @%s on GitHub, pull request #%d\n\n%s", fb.Type, rec.User, rec.PR, trailer)
	return tools.CodeRepoOf(r.Store).CommitFile(ctx, t.coder.Worktree, t.coder.Branch, review.FeedbackFile, []byte(githubFeedbackMarkdown(fb, rec)), msg,
		gitstate.Signature{Name: rec.User + " (GitHub)", Email: rec.User + "@users.noreply.github.com"})
}

// noteOnce notes the feedback on the reviewed commit, unless its note
// already holds it: checked and appended in one compare-and-swap of the
// notes ref, so the next deliverer and a git child a SIGKILLed watcher
// left running never both append it.
func (r *ReviewFetcher) noteOnce(ctx context.Context, fb review.Feedback, rec GitHubReview) error {
	_, err := tools.CodeRepoOf(r.Store).AppendNoteOnce(ctx, repo.RefReviewNotes, fb.ReviewedCommit, githubFeedbackMarkdown(fb, rec), "- feedback id: "+fb.ID+"\n")
	return err
}

// githubFeedbackMarkdown is REVIEW_FEEDBACK.md for a GitHub review:
// send_feedback's layout, with the pull request instead of an iteration.
func githubFeedbackMarkdown(fb review.Feedback, rec GitHubReview) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Review feedback: %s\n\n", fb.Type)
	fmt.Fprintf(&b, "- reviewer: @%s on GitHub (%s)\n- pull request: #%d\n- reviewed commit: %s\n", rec.User, rec.State, rec.PR, fb.ReviewedCommit)
	fmt.Fprintf(&b, "- feedback id: %s\n\n%s\n", fb.ID, strings.TrimRight(fb.Text, "\n"))
	if len(fb.Items) > 0 {
		b.WriteString("\n## Actionable items\n\n")
		for _, it := range fb.Items {
			fmt.Fprintf(&b, "- [ ] %s\n", it)
		}
	}
	return b.String()
}

// record changes the state in one transaction, audited as
// github_reviews by the fetcher's caller; fn returning errNoReview commits
// nothing.
func (r *ReviewFetcher) record(ctx context.Context, fn func(c *tools.Call) error) error {
	_, err := tools.Update(context.WithoutCancel(ctx), r.Store, func(tx *gitstate.Tx) error {
		c, err := tools.CallFor(tx, tools.Audit{Caller: r.Caller, Tool: "github_reviews", Args: "{}", Env: r.Env, Repo: tools.RepoOf(r.Store), Keys: r.Keys})
		if err != nil {
			return err
		}
		if err := fn(c); err != nil {
			return err
		}
		c.Audit(nil)
		return nil
	})
	if errors.Is(err, errNoReview) {
		return err
	}
	if err != nil {
		return tools.StoreError(err)
	}
	return nil
}

package work

import (
	"context"
	"os/exec"
	"sort"
	"strings"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/forge"
	"github.com/gitcodex/git-codex/tools/mail"
)

// CreatePullRequestIn is create_pull_request's input (seed 000).
type CreatePullRequestIn struct {
	Title       string `json:"title"`
	Description string `text:"multiline" json:"description" jsonschema:"markdown body"`
	BaseBranch  string `json:"base_branch,omitempty" jsonschema:"default: your task's epic branch, else the default branch"`
}

// PullRequestCreated is what create_pull_request returns.
type PullRequestCreated struct {
	PRNumber    int    `json:"pr_number"`
	PRURL       string `json:"pr_url"`
	BranchName  string `json:"branch_name" jsonschema:"the branch the pull request merges (yours)"`
	BaseBranch  string `json:"base_branch"`
	TaskID      string `json:"task_id,omitempty" jsonschema:"the task it was recorded on (now in REVIEW)"`
	ApprovedFor string `json:"approved_for,omitempty" jsonschema:"a reviewer's: the coder whose work it approved and whose branch the pull request is from"`
	CallID      string `json:"call_id" jsonschema:"the GitHub call's record (git codex github retry <call_id>)"`
}

// CreatePullRequest opens a pull request from the caller's branch.
var CreatePullRequest = tools.Define("create_pull_request", "github.create_pull_request",
	"Open a GitHub pull request from your branch (pushed first, never forced; REVIEW_FEEDBACK.md removed); your task goes to REVIEW. An open one is found, not opened twice. "+
		"A reviewer approves this way: the pull request is its coder's, the reviewer TERMINATED. GITHUB_UNAVAILABLE: kept, `git codex github retry` replays it.",
	tools.CLI{Path: "github pr", Args: []string{"title"}},
	func(ctx context.Context, c *tools.Call, in CreatePullRequestIn) (*PullRequestCreated, error) {
		if err := mail.CheckText(c.Config, "title", in.Title, "description", in.Description); err != nil {
			return nil, err
		}
		head := ""
		if c.Agent != nil {
			head = c.Agent.Branch
		}
		// a reviewer opens its coder's pull request, approving the work
		var approval *reviewApproval
		if c.Agent != nil && c.Agent.Type == tools.TypeReview && c.Agent.ReviewOf != "" {
			a, err := approveForPR(ctx, c)
			if err != nil {
				return nil, err
			}
			approval, head = &a, a.coder.Branch
		}
		if head == "" && c.Repo != nil {
			head = currentBranch(ctx, c.Repo.WorkDir())
		}
		if head == "" {
			return nil, tools.Errorf(tools.InvalidAgentState, "%s has no branch to open a pull request from: spawn an instance (it gets a branch), or check out a branch", c.Caller.ID)
		}
		base := strings.TrimSpace(in.BaseBranch)
		if base == head {
			return nil, tools.Errorf(tools.InvalidInput, "base_branch %s is your own branch; name the branch to merge into", base).With("field", "base_branch")
		}
		tx := c.Tx
		// the task the caller holds; a task of an epic goes into the
		// epic's branch unless base_branch says otherwise
		task := ""
		holder := tools.Agent{ID: c.Caller.ID, Type: tools.TypeHuman}
		if c.Agent != nil {
			holder = *c.Agent
		}
		if approval != nil {
			holder = approval.coder
		}
		held, ok, err := currentTask(tx, holder)
		if err != nil {
			return nil, err
		}
		if ok {
			task = held.ID
			if base == "" && held.EpicID != "" {
				if e, err := getEpic(tx, held.EpicID); err == nil && e.Branch != head {
					base = e.Branch
				}
			}
		}
		// nothing to propose: refused before anything is recorded or pushed
		// (the forge's default branch, when base is not named and origin's
		// HEAD does not say, is checked once it is known, in the after-step)
		check := base
		if check == "" {
			check = forge.DefaultBase(ctx, c.Repo.GitDir())
		}
		if why := forge.NothingToPropose(ctx, c.Repo.GitDir(), head, check); why != "" {
			return nil, tools.Errorf(tools.InvalidAgentState, "%s", why).With("branch", head).With("base_branch", check)
		}
		now := tx.Now()
		// a pull request from this branch still pending is the same call
		g, found, err := pendingPR(c, head)
		if err != nil {
			return nil, err
		}
		if !found {
			g = forge.GitHubCall{ID: tx.NewID("g"), Op: forge.OpCreatePR, Caller: c.Caller.ID, State: forge.GitHubPending, CreatedAt: now}
		}
		g.Task, g.Title, g.Body, g.Head, g.Base = task, in.Title, in.Description, head, base
		if approval != nil {
			g.For = approval.coder.ID
		}
		g.UpdatedAt, g.UpdatedBy, g.Clock = now, c.Caller.ID, tx.Clock()
		if err := tx.Put(forge.CallPath(g.ID), g); err != nil {
			return nil, err
		}
		others, err := pendingCalls(c, g.ID)
		if err != nil {
			return nil, err
		}
		c.Target(g.ID)
		c.Summarize("%s asks GitHub for a pull request from %s: %s", c.Caller.ID, head, mail.OneLineCut(in.Title))
		out := &PullRequestCreated{BranchName: head, BaseBranch: base, TaskID: task, CallID: g.ID}
		if approval != nil {
			if err := approval.end(c, in); err != nil {
				return nil, err
			}
			out.ApprovedFor = approval.coder.ID
			c.Summarize("%s approved %s's %.12s and asks GitHub for a pull request from %s: %s", c.Caller.ID, approval.coder.ID, approval.rel.ReviewedCommit, head, mail.OneLineCut(in.Title))
		}
		c.After(func(ctx context.Context, f *tools.Followup) error {
			r, err := forge.NewRun(ctx, f, taskOutcome)
			if err != nil {
				return err
			}
			done, err := r.Make(ctx, g.ID)
			if approval != nil {
				approval.finish(ctx, f, done, err)
			}
			if err != nil {
				return err
			}
			if done.PR != nil {
				out.PRNumber, out.PRURL, out.BaseBranch = done.PR.Number, done.PR.URL, done.PR.Base
			}
			r.ReplayOthers(ctx, others)
			return nil
		})
		return out, mail.TouchAgent(c)
	})

// pendingPR finds the caller's PENDING pull request call from head.
func pendingPR(c *tools.Call, head string) (forge.GitHubCall, bool, error) {
	var g forge.GitHubCall
	found := false
	err := tools.WalkJSON(c.Tx, forge.Dir, func(x forge.GitHubCall) {
		if !found && x.State == forge.GitHubPending && x.Op == forge.OpCreatePR && x.Caller == c.Caller.ID && x.Head == head {
			g, found = x, true
		}
	})
	return g, found, err
}

// currentBranch is the branch checked out in dir, or "".
func currentBranch(ctx context.Context, dir string) string {
	if dir == "" {
		return ""
	}
	cmd := exec.CommandContext(ctx, "git", "symbolic-ref", "--quiet", "--short", "HEAD")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// CreateIssuesIn is create_issues's input.
type CreateIssuesIn struct {
	Issues []forge.IssueRequest `json:"issues"`
}

// IssuesCreated is what create_issues returns.
type IssuesCreated struct {
	Count  int                  `json:"count"`
	Issues []forge.IssueRequest `json:"issues" jsonschema:"the issues, each with its number and url"`
	CallID string               `json:"call_id"`
}

// maxIssues bounds one create_issues call.
const maxIssues = 50

// CreateIssues opens GitHub issues (planning agents).
var CreateIssues = tools.Define("create_issues", "github.create_issues",
	"Open GitHub issues (planning work); returns their numbers and URLs. GITHUB_UNAVAILABLE: kept, `git codex github retry` replays it, never opening one twice.",
	tools.CLI{Path: "github issues"},
	func(ctx context.Context, c *tools.Call, in CreateIssuesIn) (*IssuesCreated, error) {
		if len(in.Issues) == 0 || len(in.Issues) > maxIssues {
			return nil, tools.Errorf(tools.InvalidInput, "give between 1 and %d issues; got %d", maxIssues, len(in.Issues)).With("field", "issues")
		}
		for i := range in.Issues {
			is := &in.Issues[i]
			if err := mail.CheckText(c.Config, "title", is.Title, "body", is.Body); err != nil {
				return nil, tools.AsError(err).With("index", i)
			}
			if is.Number != 0 || is.URL != "" {
				return nil, tools.Errorf(tools.InvalidInput, "issue %d: number and url are GitHub's to give; leave them out", i).With("index", i)
			}
		}
		tx := c.Tx
		now := tx.Now()
		g := forge.GitHubCall{ID: tx.NewID("g"), Op: forge.OpCreateIssues, Caller: c.Caller.ID, Issues: in.Issues, State: forge.GitHubPending,
			CreatedAt: now, UpdatedAt: now, UpdatedBy: c.Caller.ID, Clock: tx.Clock()}
		if err := tx.Put(forge.CallPath(g.ID), g); err != nil {
			return nil, err
		}
		others, err := pendingCalls(c, g.ID)
		if err != nil {
			return nil, err
		}
		c.Target(g.ID)
		c.Summarize("%s asks GitHub for %d issue(s)", c.Caller.ID, len(in.Issues))
		out := &IssuesCreated{CallID: g.ID}
		c.After(func(ctx context.Context, f *tools.Followup) error {
			r, err := forge.NewRun(ctx, f, taskOutcome)
			if err != nil {
				return err
			}
			done, err := r.Make(ctx, g.ID)
			if err != nil {
				return err
			}
			out.Issues, out.Count = done.Issues, len(done.Issues)
			r.ReplayOthers(ctx, others)
			return nil
		})
		return out, mail.TouchAgent(c)
	}).Hint(tools.Hints{Additive: true})

// GitHubRetryIn is github_retry's input.
type GitHubRetryIn struct {
	ID   string `json:"id,omitempty" jsonschema:"replay only this call (default: every PENDING call you may replay)"`
	List bool   `json:"list,omitempty" jsonschema:"only list the PENDING calls; replay nothing"`
}

// GitHubRetried is what github_retry returns.
type GitHubRetried struct {
	Count int                `json:"count"`
	Calls []forge.GitHubCall `json:"calls" jsonschema:"the calls replayed (or listed), as recorded afterwards"`
}

// GitHubRetry replays GitHub calls that are still PENDING.
var GitHubRetry = tools.Define("github_retry", "github.retry",
	"Replay GitHub calls still PENDING (GitHub was unreachable, down or rate-limited): each asks GitHub first whether it was done, so nothing is sent twice. "+
		"People and supervisors replay anyone's; agents their own. With list: true, only list them.",
	tools.CLI{Path: "github retry", Args: []string{"id"}},
	func(ctx context.Context, c *tools.Call, in GitHubRetryIn) (*GitHubRetried, error) {
		out := &GitHubRetried{Calls: []forge.GitHubCall{}}
		if in.ID != "" {
			g, err := forge.GetCall(c.Tx, in.ID)
			if err != nil {
				return nil, err
			}
			if g.Caller != c.Caller.ID && !tools.MayForce(c.Caller.Type) {
				return nil, tools.Errorf(tools.PermissionDenied, "GitHub call %s is %s's; only they, a person or a supervisor may replay it", g.ID, g.Caller).With("call_id", g.ID)
			}
			if g.State != forge.GitHubPending {
				return nil, tools.Errorf(tools.InvalidInput, "GitHub call %s is %s, not PENDING: nothing to replay", g.ID, g.State).With("call_id", g.ID).With("state", g.State)
			}
			out.Calls = append(out.Calls, g)
		} else {
			err := tools.WalkJSON(c.Tx, forge.Dir, func(g forge.GitHubCall) {
				if g.State == forge.GitHubPending && (g.Caller == c.Caller.ID || tools.MayForce(c.Caller.Type)) {
					out.Calls = append(out.Calls, g)
				}
			})
			if err != nil {
				return nil, err
			}
			sort.Slice(out.Calls, func(i, j int) bool { return out.Calls[i].ID < out.Calls[j].ID })
		}
		out.Count = len(out.Calls)
		if in.List || out.Count == 0 {
			c.Summarize("%s listed %d pending GitHub call(s)", c.Caller.ID, out.Count)
			return out, nil
		}
		c.Summarize("%s replays %d pending GitHub call(s)", c.Caller.ID, out.Count)
		c.After(func(ctx context.Context, f *tools.Followup) error {
			r, err := forge.NewRun(ctx, f, taskOutcome)
			if err != nil {
				return err
			}
			var first error
			for i, g := range out.Calls {
				done, err := r.Make(ctx, g.ID)
				out.Calls[i] = done
				if err != nil && first == nil {
					first = err
				}
			}
			if len(out.Calls) == 1 {
				return first // one call asked for: its outcome is the answer
			}
			return nil
		})
		return out, nil
	})

// pendingCalls lists the ids of PENDING GitHub calls but skip.
func pendingCalls(c *tools.Call, skip string) ([]string, error) {
	var ids []string
	err := tools.WalkJSON(c.Tx, forge.Dir, func(g forge.GitHubCall) {
		if g.State == forge.GitHubPending && g.ID != skip {
			ids = append(ids, g.ID)
		}
	})
	return ids, err
}

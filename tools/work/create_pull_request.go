package work

import (
	"context"
	"os/exec"
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

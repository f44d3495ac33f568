package work

import (
	"context"
	"strings"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
	"github.com/gitcodex/git-codex/tools/mail"
)

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

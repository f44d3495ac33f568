package work

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/forge"
	"github.com/gitcodex/git-codex/tools/mail"
)

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

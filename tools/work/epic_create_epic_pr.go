package work

import (
	"context"
	"fmt"
	"strings"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/forge"
	"github.com/gitcodex/git-codex/tools/mail"
)

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

package work

import (
	"context"
	"fmt"
	"os"

	"github.com/gitcodex/git-codex/tools"
)

// GitHubReviewsIn is github_reviews's input: nothing.
type GitHubReviewsIn struct{}

// GitHubReviewsFetched is what github_reviews returns.
type GitHubReviewsFetched struct {
	PullRequests int            `json:"pull_requests" jsonschema:"the pull requests of live instances whose reviews were fetched"`
	Count        int            `json:"count" jsonschema:"the reviews delivered by this call"`
	Delivered    []GitHubReview `json:"delivered" jsonschema:"each review delivered: its instance, feedback id and commit, and the task an approval completed"`
}

// GitHubReviewsTool fetches and delivers GitHub reviews once (the watcher
// does the same every --interval).
var GitHubReviewsTool = tools.Define("github_reviews", "github.reviews",
	"Fetch the GitHub reviews of the pull requests instances opened and deliver each new submitted one (approved, changes requested, commented, with its line comments) to its instance as review feedback: "+
		"REVIEW_FEEDBACK.md committed on its branch and noted on the reviewed commit; `git codex watch` wakes it. Once per review, whichever clone or watcher fetches it. "+
		"An approval completes the pull request's task (github.approval_completes). Only reads GitHub; `git codex watch` does this every --interval.",
	tools.CLI{Path: "github reviews"},
	func(ctx context.Context, c *tools.Call, in GitHubReviewsIn) (*GitHubReviewsFetched, error) {
		targets, err := reviewTargets(c.Tx, c.Repo.GitDir())
		if err != nil {
			return nil, err
		}
		out := &GitHubReviewsFetched{PullRequests: len(targets), Delivered: []GitHubReview{}}
		c.Summarize("%s fetches the GitHub reviews of %d pull request(s)", c.Caller.ID, len(targets))
		if len(targets) == 0 {
			return out, nil
		}
		c.After(func(ctx context.Context, f *tools.Followup) error {
			host, _ := os.Hostname()
			r := &ReviewFetcher{Store: f.Store, Env: f.Env, Keys: f.ConfigKeys(), Caller: f.Caller, Holder: fmt.Sprintf("github_reviews:%s:%d", host, os.Getpid())}
			got, err := r.Pass(ctx)
			out.Delivered = append(out.Delivered, got...)
			out.Count = len(out.Delivered)
			return err
		})
		return out, nil
	})

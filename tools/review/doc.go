// Package review is the review loop: a coder's request_review spawns a
// reviewer instance (tools/instance) on its branch, under a claim on the
// coder's one active review (ActiveReview); the reviewer's send_feedback
// lands as a commit in the coder's worktree and a note on the reviewed
// commit (Feedback), and the relationship records tie the two. When a
// reviewer ends, the AgentEnded hook (endActiveReview) lets its coder's
// review go. Approving for a pull request (reviewpr.go) and GitHub's own
// reviews read tasks and call GitHub, and stay above it in tools/work.
package review

import "github.com/gitcodex/git-codex/tools"

// Catalog is what this package adds to git codex: its tools, its
// AgentEnded hook and its record kinds, for the assembly (tools/builtin).
// A fresh value on every call.
func Catalog() tools.Catalog {
	return tools.Catalog{
		Tools: []*tools.Tool{RequestReview, SendFeedback},
		Hooks: tools.Hooks{AgentEnded: []func(c *tools.Call, a *tools.Agent) error{endActiveReview}},
		Kinds: []tools.Kind{activeReviewKind(), relationshipKind(), feedbackKind()},
	}
}

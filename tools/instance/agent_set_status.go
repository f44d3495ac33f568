package instance

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
)

// SetStatusIn is agent_set_status's input.
type SetStatusIn struct {
	Status string `json:"status" jsonschema:"COMPLETED when your work is done, or ACTIVE"`
	Reason string `json:"reason,omitempty" jsonschema:"why, in a line"`
}

// AgentSetStatus lets an instance change its own status, and only its own:
// COMPLETED when its work is done, ACTIVE to take it up again. The review
// loop's statuses are set by the review loop.
var AgentSetStatus = tools.Define("agent_set_status", "agent.set_status",
	"Set your own status (instances git codex runs): COMPLETED when your work is done, ACTIVE to go on. Only your own; WAITING_REVIEW and REVIEWING are the review loop's.",
	tools.CLI{Path: "agent set-status", Args: []string{"status"}},
	func(ctx context.Context, c *tools.Call, in SetStatusIn) (*tools.Agent, error) {
		a := c.Agent
		if a == nil || a.Status == "" {
			return nil, tools.Errorf(tools.PermissionDenied, "only instances git codex runs have a status to set; see `git codex ps`").With("agent_type", string(c.Caller.Type))
		}
		if in.Status != tools.StatusCompleted && in.Status != tools.StatusActive {
			return nil, tools.Errorf(tools.InvalidInput, "status %q: set COMPLETED or ACTIVE (the review loop sets the others)", in.Status).With("field", "status")
		}
		if Final(a.Status) || a.Status == tools.StatusWaitingReview || a.Status == tools.StatusReviewing || a.Status == tools.StatusStarting {
			return nil, tools.Errorf(tools.InvalidAgentState, "%s is %s; it cannot become %s now", a.ID, a.Status, in.Status).With("agent_id", a.ID).With("status", a.Status)
		}
		if err := SetStatus(c, a, in.Status, in.Reason); err != nil {
			return nil, err
		}
		c.Target(a.ID)
		c.Summarize("%s is %s", a.ID, in.Status)
		return a, nil
	})

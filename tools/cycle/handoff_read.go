package cycle

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
)

// HandoffReadIn is handoff_read's input.
type HandoffReadIn struct {
	Target  string `json:"target" jsonschema:"whose handoff to read: the role it was written for"`
	Feature string `json:"feature,omitempty" jsonschema:"the feature whose cycle it is (needed only when several run)"`
}

// HandoffRead returns a role's handoff.
var HandoffRead = tools.Define("handoff_read", "handoff.read",
	"Read the handoff last written for a role in a running cycle (seed 001's handoff.read): the payload, or {} when there is none. Needs no session.",
	tools.CLI{Path: "handoff read", Args: []string{"target"}},
	func(ctx context.Context, c *tools.Call, in HandoffReadIn) (map[string]any, error) {
		ac, err := findCycle(c.Tx, in.Feature)
		if errNoCycle(err) {
			c.Summarize("%s read the %s handoff: no cycle", c.Caller.ID, in.Target)
			return map[string]any{}, nil
		}
		if err != nil {
			return nil, err
		}
		cy := ac.cycle
		c.Target(cy.CycleID)
		if !cy.Workflow.HasRole(in.Target) {
			return nil, tools.Errorf(tools.InvalidTarget, "target %q is not a role of the workflow (roles: %v)", in.Target, cy.Workflow.Roles()).With("target", in.Target)
		}
		c.Summarize("%s read the %s handoff of cycle %s", c.Caller.ID, in.Target, cy.CycleID)
		if h := cy.Handoffs[in.Target]; h != nil {
			return h.Payload, nil
		}
		return map[string]any{}, nil
	})

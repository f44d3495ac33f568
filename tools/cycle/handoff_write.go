package cycle

import (
	"context"
	"fmt"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/lock"
)

// HandoffWriteIn is handoff_write's input.
type HandoffWriteIn struct {
	Target       string         `json:"target" jsonschema:"the role the handoff is for, e.g. codex or gemini"`
	Payload      map[string]any `json:"payload" jsonschema:"the handoff: cycle_id, feature, producer, consumer, files_modified, endpoints, data_shapes, assumptions, todos, notes, optional extras"`
	LockToken    string         `json:"lock_token" jsonschema:"the token lock_acquire returned" text:"credential"`
	SessionToken string         `json:"session_token" jsonschema:"the token session_open returned" text:"credential"`
	Feature      string         `json:"feature,omitempty" jsonschema:"the feature whose cycle it is (needed only when several run)"`
}

// HandoffWritten is what handoff_write returns; never a token.
type HandoffWritten struct {
	OK         bool   `json:"ok"`
	CycleID    string `json:"cycle_id"`
	Phase      string `json:"phase"`
	ActiveRole string `json:"active_role"`
	NextStep   string `json:"next_step"`
}

// HandoffWrite hands work to the next role.
var HandoffWrite = tools.Define("handoff_write", "handoff.write",
	"Hand the cycle to the next role (seed 001's handoff.write): the payload, validated against the handoff schema, is stored for the target, the phase moves on and the lock passes to the target role, whose holder gets a fresh token with lock_acquire. Only the active role, with its session and the current lock token.",
	tools.CLI{Path: "handoff write", Args: []string{"target"}},
	func(ctx context.Context, c *tools.Call, in HandoffWriteIn) (HandoffWritten, error) {
		s, ac, err := sessionCycle(c, in.SessionToken, in.Feature)
		if err != nil {
			return HandoffWritten{}, err
		}
		cy := ac.cycle
		c.Target(cy.CycleID)
		if !cy.Workflow.HasRole(in.Target) {
			return HandoffWritten{}, tools.Errorf(tools.InvalidTarget, "target %q is not a role of the workflow (roles: %v)", in.Target, cy.Workflow.Roles()).With("target", in.Target)
		}
		t, ok := cy.Workflow.Next(cy.Phase, in.Target)
		if !ok {
			return HandoffWritten{}, tools.Errorf(tools.InvalidPhase, "in phase %s there is no handoff to %s; see the workflow with `git codex config get cycle.workflow`", cy.Phase, in.Target).
				With("phase", cy.Phase).With("target", in.Target)
		}
		if err := ac.checkLockToken(s, in.LockToken); err != nil {
			return HandoffWritten{}, err
		}
		if err := validateHandoff(in.Payload, cy, s.Role, in.Target); err != nil {
			return HandoffWritten{}, err
		}
		now := c.Tx.Now()
		cy.Handoffs[in.Target] = &lock.Handoff{Payload: in.Payload, UpdatedAt: now, UpdatedBy: c.Caller.ID, Session: s.ID}
		cy.HandoffStatus[in.Target] = handoffPresent
		cy.Phase, cy.ActiveRole = t.To, t.Target
		// the lock passes to the target; the producer's token dies with it
		ac.lock.Claim, ac.lock.TokenHash = grant(c, t.Target), ""
		ac.record(c, "handoff", in.Target)
		c.Summarize("%s handed cycle %s from %s to %s (%s)", c.Caller.ID, cy.CycleID, s.Role, t.Target, t.To)
		return HandoffWritten{OK: true, CycleID: cy.CycleID, Phase: cy.Phase, ActiveRole: cy.ActiveRole,
			NextStep: fmt.Sprintf("Provide lock_token to %s", t.Target)}, putCycle(c, ac)
	})

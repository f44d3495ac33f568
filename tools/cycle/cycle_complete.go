package cycle

import (
	"context"
	"slices"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/lock"
)

// CycleComplete completes a cycle.
var CycleComplete = tools.Define("cycle_complete", "cycle.complete",
	"Complete a cycle (seed 001's cycle.complete): only from a phase the workflow allows (frontend_refine), by its active role with the cycle's lock token. The role keeps the lock, to archive it.",
	tools.CLI{Path: "cycle complete"},
	func(ctx context.Context, c *tools.Call, in CycleTokensIn) (CycleStepDone, error) {
		s, ac, err := sessionCycle(c, in.SessionToken, in.Feature)
		if err != nil {
			return CycleStepDone{}, err
		}
		cy := ac.cycle
		c.Target(cy.CycleID)
		if !slices.Contains(cy.Workflow.CompleteFrom, cy.Phase) {
			return CycleStepDone{}, tools.Errorf(tools.InvalidPhase, "cycle %s is in phase %s; it can be completed only from %v", cy.CycleID, cy.Phase, cy.Workflow.CompleteFrom).
				With("phase", cy.Phase).With("complete_from", cy.Workflow.CompleteFrom)
		}
		if err := ac.checkLockToken(s, in.LockToken); err != nil {
			return CycleStepDone{}, err
		}
		cy.Phase, cy.CompletedBy = lock.PhaseComplete, s.Role
		ac.lock.Claim = grant(c, s.Role)
		ac.record(c, "complete", "")
		c.Summarize("%s completed cycle %s as %s", c.Caller.ID, cy.CycleID, s.Role)
		return CycleStepDone{CycleID: cy.CycleID, Feature: cy.Feature, Phase: cy.Phase, ActiveRole: cy.ActiveRole}, putCycle(c, ac)
	})

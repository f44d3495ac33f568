package cycle

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/lock"
)

// CycleStartIn is cycle_start's input.
type CycleStartIn struct {
	Feature string            `json:"feature" jsonschema:"the feature the cycle builds: 1-64 letters, digits, _ and -"`
	Bind    map[string]string `json:"bind,omitempty" jsonschema:"bind roles to agents (role -> agent id): a bound agent opens its role's sessions without the PSK, with its own credential"`
}

// CycleStarted is what cycle_start returns.
type CycleStarted struct {
	CycleID    string `json:"cycle_id"`
	Feature    string `json:"feature"`
	Phase      string `json:"phase"`
	ActiveRole string `json:"active_role"`
	Lock       string `json:"lock" jsonschema:"the name of the cycle's lock; its token comes from lock_acquire {session_token}"`
}

// CycleStart starts a feature's cycle.
var CycleStart = tools.Define("cycle_start", "cycle.start",
	"Start a handoff cycle for a feature (seed 001's cycle.start): the workflow's first phase, its role active and holding the cycle's lock. Several features' cycles may run at once; one per feature.",
	tools.CLI{Path: "cycle start", Args: []string{"feature"}},
	func(ctx context.Context, c *tools.Call, in CycleStartIn) (CycleStarted, error) {
		if err := lock.ValidFeature(in.Feature); err != nil {
			return CycleStarted{}, err
		}
		w, err := configWorkflow(c.Config)
		if err != nil {
			return CycleStarted{}, err
		}
		for role, agent := range in.Bind {
			if !w.HasRole(role) {
				return CycleStarted{}, tools.Errorf(tools.InvalidRole, "bind: %q is not a role of the workflow (roles: %v)", role, w.Roles()).With("role", role)
			}
			if _, err := tools.GetAgent(c.Tx, agent); err != nil {
				return CycleStarted{}, err
			}
		}
		ac, running, err := getCycle(c.Tx, in.Feature)
		if err != nil {
			return CycleStarted{}, err
		}
		if running {
			return CycleStarted{}, tools.Errorf(tools.CycleAlreadyActive, "cycle %s of feature %s is running (phase %s); see `git codex cycle status --feature %s`",
				ac.cycle.CycleID, in.Feature, ac.cycle.Phase, in.Feature).With("cycle_id", ac.cycle.CycleID).With("phase", ac.cycle.Phase)
		}
		now := c.Tx.Now()
		cy := &lock.Cycle{
			CycleID: newCycleID(c.Tx, in.Feature), Feature: in.Feature, Phase: w.Start, ActiveRole: w.Phases[w.Start], Mode: ModeApproval,
			Workflow: w, Bind: in.Bind, HandoffStatus: map[string]string{}, Handoffs: map[string]*lock.Handoff{},
			CreatedAt: now, CreatedBy: c.Caller.ID,
		}
		for _, r := range w.Roles() {
			cy.HandoffStatus[r] = handoffEmpty
		}
		ac = activeCycle{lock: lock.Lock{Name: lock.CycleName(in.Feature), Claim: grant(c, cy.ActiveRole), Reason: "cycle " + cy.CycleID}, cycle: cy}
		ac.record(c, "start", "")
		c.Target(cy.CycleID)
		c.Summarize("%s started cycle %s (%s, %s active)", c.Caller.ID, cy.CycleID, cy.Phase, cy.ActiveRole)
		return CycleStarted{CycleID: cy.CycleID, Feature: cy.Feature, Phase: cy.Phase, ActiveRole: cy.ActiveRole, Lock: ac.lock.Name}, putCycle(c, ac)
	})

package cycle

import (
	"context"
	"time"

	"github.com/gitcodex/git-codex/tools"
)

// CycleStatusIn is cycle_status's input.
type CycleStatusIn struct {
	Feature string `json:"feature,omitempty" jsonschema:"the feature whose cycle to show (needed only when several run)"`
}

// CycleStatus is a cycle as cycle_status shows it (never a token).
type CycleStatus struct {
	Active        bool                     `json:"active"`
	CycleID       *string                  `json:"cycle_id"`
	Feature       *string                  `json:"feature"`
	Phase         *string                  `json:"phase"`
	ActiveRole    *string                  `json:"active_role"`
	Mode          string                   `json:"mode"`
	CreatedAt     *time.Time               `json:"created_at"`
	UpdatedAt     *time.Time               `json:"updated_at"`
	HandoffStatus map[string]string        `json:"handoff_status"`
	Handoffs      map[string]HandoffStatus `json:"handoffs"`
	Lock          CycleLockStatus          `json:"lock"`
	Running       []string                 `json:"running" jsonschema:"the features whose cycles are running"`
}

// HandoffStatus is one role's inbox of a cycle: present or empty.
type HandoffStatus struct {
	Status    string     `json:"status"`
	UpdatedAt *time.Time `json:"updated_at"`
}

// CycleLockStatus says who holds a cycle's lock.
type CycleLockStatus struct {
	Locked bool   `json:"locked"`
	Role   string `json:"role,omitempty"`
	Name   string `json:"name,omitempty"`
}

// CycleStatusTool shows a cycle.
var CycleStatusTool = tools.Define("cycle_status", "cycle.status",
	"Show a cycle (seed 001's cycle.status): phase, active role, handoff status and who holds its lock; idle when none runs. Never shows a token.",
	tools.CLI{Path: "cycle status"},
	func(ctx context.Context, c *tools.Call, in CycleStatusIn) (CycleStatus, error) {
		running, err := activeFeatures(c.Tx)
		if err != nil {
			return CycleStatus{}, err
		}
		idle := CycleStatus{Mode: ModeApproval, HandoffStatus: map[string]string{}, Handoffs: map[string]HandoffStatus{}, Running: append([]string{}, running...)}
		if in.Feature == "" && len(running) == 0 {
			if w, err := configWorkflow(c.Config); err == nil {
				for _, r := range w.Roles() {
					idle.HandoffStatus[r] = handoffEmpty
					idle.Handoffs[r] = HandoffStatus{Status: handoffEmpty}
				}
			}
			c.Summarize("%s looked at the cycles: none running", c.Caller.ID)
			return idle, nil
		}
		ac, err := findCycle(c.Tx, in.Feature)
		if errNoCycle(err) && in.Feature != "" {
			c.Summarize("%s looked at cycle %s: idle", c.Caller.ID, in.Feature)
			return idle, nil
		}
		if err != nil {
			return CycleStatus{}, err
		}
		cy := ac.cycle
		st := CycleStatus{
			Active: true, CycleID: &cy.CycleID, Feature: &cy.Feature, Phase: &cy.Phase, ActiveRole: &cy.ActiveRole, Mode: cy.Mode,
			CreatedAt: &cy.CreatedAt, UpdatedAt: &cy.UpdatedAt, HandoffStatus: cy.HandoffStatus, Handoffs: map[string]HandoffStatus{},
			Lock: CycleLockStatus{Name: ac.lock.Name}, Running: running,
		}
		for r, s := range cy.HandoffStatus {
			hs := HandoffStatus{Status: s}
			if h := cy.Handoffs[r]; h != nil {
				hs.UpdatedAt = &h.UpdatedAt
			}
			st.Handoffs[r] = hs
		}
		if ac.lock.Claim != nil {
			st.Lock.Locked, st.Lock.Role = true, ac.lock.Claim.Holder
		}
		c.Target(cy.CycleID)
		c.Summarize("%s looked at cycle %s (%s)", c.Caller.ID, cy.CycleID, cy.Phase)
		return st, nil
	})

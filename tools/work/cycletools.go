package work

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/gitcodex/git-codex/tools"
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
		if err := validFeature(in.Feature); err != nil {
			return CycleStarted{}, err
		}
		w, err := configWorkflow(c.Config)
		if err != nil {
			return CycleStarted{}, err
		}
		for role, agent := range in.Bind {
			if !w.hasRole(role) {
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
		cy := &Cycle{
			CycleID: newCycleID(c.Tx, in.Feature), Feature: in.Feature, Phase: w.Start, ActiveRole: w.Phases[w.Start], Mode: ModeApproval,
			Workflow: w, Bind: in.Bind, HandoffStatus: map[string]string{}, Handoffs: map[string]*Handoff{},
			CreatedAt: now, CreatedBy: c.Caller.ID,
		}
		for _, r := range w.Roles() {
			cy.HandoffStatus[r] = handoffEmpty
		}
		ac = activeCycle{lock: Lock{Name: cycleLockName(in.Feature), Claim: grant(c, cy.ActiveRole), Reason: "cycle " + cy.CycleID}, cycle: cy}
		ac.record(c, "start", "")
		c.Target(cy.CycleID)
		c.Summarize("%s started cycle %s (%s, %s active)", c.Caller.ID, cy.CycleID, cy.Phase, cy.ActiveRole)
		return CycleStarted{CycleID: cy.CycleID, Feature: cy.Feature, Phase: cy.Phase, ActiveRole: cy.ActiveRole, Lock: ac.lock.Name}, putCycle(c, ac)
	})

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

// CycleTokensIn is the input of cycle_complete and cycle_archive.
type CycleTokensIn struct {
	LockToken    string `json:"lock_token" jsonschema:"the token lock_acquire returned" text:"credential"`
	SessionToken string `json:"session_token" jsonschema:"the token session_open returned" text:"credential"`
	Feature      string `json:"feature,omitempty" jsonschema:"the feature whose cycle it is (needed only when several run)"`
}

// CycleStepDone is what cycle_complete and cycle_archive return.
type CycleStepDone struct {
	CycleID    string `json:"cycle_id"`
	Feature    string `json:"feature"`
	Phase      string `json:"phase" jsonschema:"the phase now; idle after archive"`
	ActiveRole string `json:"active_role,omitempty"`
	Archive    string `json:"archive,omitempty" jsonschema:"the ref the archived cycle was written to"`
}

// sessionCycle checks a call's session and finds its cycle.
func sessionCycle(c *tools.Call, sessionToken, feature string) (Session, activeCycle, error) {
	s, err := lookupSession(c, sessionToken)
	if err != nil {
		return Session{}, activeCycle{}, err
	}
	if feature == "" {
		feature = s.Feature
	} else if s.Feature != "" && s.Feature != feature {
		return Session{}, activeCycle{}, tools.Errorf(tools.InvalidSession, "the session was opened for feature %s, not %s", s.Feature, feature).With("feature", feature)
	}
	ac, err := findCycle(c.Tx, feature)
	return s, ac, err
}

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
		cy.Phase, cy.CompletedBy = PhaseComplete, s.Role
		ac.lock.Claim = grant(c, s.Role)
		ac.record(c, "complete", "")
		c.Summarize("%s completed cycle %s as %s", c.Caller.ID, cy.CycleID, s.Role)
		return CycleStepDone{CycleID: cy.CycleID, Feature: cy.Feature, Phase: cy.Phase, ActiveRole: cy.ActiveRole}, putCycle(c, ac)
	})

// ArchiveRef is where an archived cycle is kept.
func ArchiveRef(cycleID string) string { return "refs/codex/archive/" + cycleID }

// CycleArchive archives a completed cycle and sets it idle.
var CycleArchive = tools.Define("cycle_archive", "cycle.archive",
	"Archive a completed cycle (seed 001's cycle.archive) as a commit at refs/codex/archive/<cycle_id> (config, state, lock, handoffs, manifest) and set the feature idle; only the role that completed it, with the lock token.",
	tools.CLI{Path: "cycle archive"},
	func(ctx context.Context, c *tools.Call, in CycleTokensIn) (CycleStepDone, error) {
		s, ac, err := sessionCycle(c, in.SessionToken, in.Feature)
		if err != nil {
			return CycleStepDone{}, err
		}
		cy := ac.cycle
		c.Target(cy.CycleID)
		if cy.Phase != PhaseComplete {
			return CycleStepDone{}, tools.Errorf(tools.ArchiveNotAllowed, "cycle %s is in phase %s; complete it first with `git codex cycle complete`", cy.CycleID, cy.Phase).With("phase", cy.Phase)
		}
		if s.Role != cy.CompletedBy {
			return CycleStepDone{}, tools.Errorf(tools.ArchiveNotAllowed, "cycle %s is archived by %s, the role that completed it, not %s", cy.CycleID, cy.CompletedBy, s.Role).
				With("role", s.Role).With("completed_by", cy.CompletedBy)
		}
		if err := ac.checkLockToken(s, in.LockToken); err != nil {
			return CycleStepDone{}, err
		}
		files, err := archiveFiles(c, ac)
		if err != nil {
			return CycleStepDone{}, err
		}
		ref := ArchiveRef(cy.CycleID)
		// the archive's commit is audited as the call is (auditRecord)
		summary := fmt.Sprintf("cycle %s (%s) archived by %s", cy.CycleID, cy.Feature, c.Caller.ID)
		if err := c.Tx.CommitAt(ref, files, c.AuditOf(cy.CycleID, summary)); err != nil {
			return CycleStepDone{}, err
		}
		ac.lock.Claim, ac.lock.TokenHash, ac.lock.Reason = nil, "", ""
		out := CycleStepDone{CycleID: cy.CycleID, Feature: cy.Feature, Phase: "idle", Archive: ref}
		ac.cycle = nil
		c.Summarize("%s archived cycle %s to %s", c.Caller.ID, cy.CycleID, ref)
		return out, putCycle(c, ac)
	})

// ArchiveManifest describes an archived cycle (manifest.json).
type ArchiveManifest struct {
	CycleID    string      `json:"cycle_id"`
	Feature    string      `json:"feature"`
	ArchivedAt time.Time   `json:"archived_at"`
	ArchivedBy string      `json:"archived_by"`
	StateTip   string      `json:"state_tip" jsonschema:"the refs/codex/state commit the archive was taken from; the cycle's audit trail is its history"`
	Files      []string    `json:"files"`
	History    []CycleStep `json:"history"`
}

// archiveFiles is the archive's tree, seed 001's layout: config.json,
// state.json, lock.json, handoff/<role>.json and manifest.json. No token or
// hash of one is in it.
func archiveFiles(c *tools.Call, ac activeCycle) (map[string][]byte, error) {
	cy := ac.cycle
	files := map[string][]byte{}
	put := func(name string, v any) error {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		files[name] = append(b, '\n')
		return nil
	}
	state := map[string]any{
		"active": false, "cycle_id": cy.CycleID, "feature": cy.Feature, "phase": cy.Phase, "active_role": cy.ActiveRole,
		"mode": cy.Mode, "created_at": cy.CreatedAt, "updated_at": c.Tx.Now(), "handoff_status": cy.HandoffStatus,
	}
	lock := map[string]any{"name": ac.lock.Name, "locked": ac.lock.Claim != nil, "claim": ac.lock.Claim, "cycle_id": cy.CycleID}
	config := map[string]any{"mode": cy.Mode, "workflow": cy.Workflow, "bind": cy.Bind}
	steps := []struct {
		name string
		v    any
	}{{"config.json", config}, {"state.json", state}, {"lock.json", lock}}
	roles := make([]string, 0, len(cy.Handoffs))
	for r := range cy.Handoffs {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	for _, r := range roles {
		steps = append(steps, struct {
			name string
			v    any
		}{"handoff/" + r + ".json", cy.Handoffs[r]})
	}
	var names []string
	for _, s := range steps {
		if err := put(s.name, s.v); err != nil {
			return nil, err
		}
		names = append(names, s.name)
	}
	m := ArchiveManifest{CycleID: cy.CycleID, Feature: cy.Feature, ArchivedAt: c.Tx.Now(), ArchivedBy: c.Caller.ID,
		StateTip: c.Tx.Parent(), Files: names, History: cy.History}
	return files, put("manifest.json", m)
}

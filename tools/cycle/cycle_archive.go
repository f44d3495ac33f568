package cycle

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/lock"
)

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
		if cy.Phase != lock.PhaseComplete {
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
	CycleID    string           `json:"cycle_id"`
	Feature    string           `json:"feature"`
	ArchivedAt time.Time        `json:"archived_at"`
	ArchivedBy string           `json:"archived_by"`
	StateTip   string           `json:"state_tip" jsonschema:"the refs/codex/state commit the archive was taken from; the cycle's audit trail is its history"`
	Files      []string         `json:"files"`
	History    []lock.CycleStep `json:"history"`
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

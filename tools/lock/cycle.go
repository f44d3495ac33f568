package lock

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
)

// Cycle is seed 001's handoff cycle for one feature: who may act now
// (ActiveRole, in Phase), and what each role last handed over. It lives
// inside the cycle's lock record (locks/…, name "cycle/<feature>"), in its
// "cycle" field, which belongs to the lock's claim: the claim is the grant
// of the current phase to its role. So sync settles a cycle advanced on two
// machines like any lock granted twice: one side's claim and cycle, whole;
// a conflict record; a mail to the loser.
type Cycle struct {
	CycleID    string `json:"cycle_id"`
	Feature    string `json:"feature"`
	Phase      string `json:"phase"`
	ActiveRole string `json:"active_role"`
	Mode       string `json:"mode"`
	// Workflow is the machine the cycle runs, copied from config at start
	// (a change to cycle.workflow applies to cycles started afterwards).
	Workflow Workflow `json:"workflow"`
	// Bind names the agent bound to a role at start: it opens that role's
	// sessions without a PSK, presenting its own credential.
	Bind map[string]string `json:"bind,omitempty"`
	// CompletedBy is the role that completed the cycle; it archives it.
	CompletedBy   string              `json:"completed_by,omitempty"`
	HandoffStatus map[string]string   `json:"handoff_status"`
	Handoffs      map[string]*Handoff `json:"handoffs"`
	// History is every step the cycle took, for the archive.
	History   []CycleStep `json:"history"`
	CreatedAt time.Time   `json:"created_at"`
	CreatedBy string      `json:"created_by"`
	UpdatedAt time.Time   `json:"updated_at"`
}

// Handoff is what one role handed to another: the payload (seed 001's
// handoff schema) and who wrote it when.
type Handoff struct {
	Payload   map[string]any `json:"payload"`
	UpdatedAt time.Time      `json:"updated_at"`
	UpdatedBy string         `json:"updated_by" jsonschema:"the caller that wrote it"`
	Session   string         `json:"session" jsonschema:"the id of the session it was written in"`
}

// CycleStep is one step of a cycle: a start, a handoff, a completion.
type CycleStep struct {
	Step   string         `json:"step" jsonschema:"start, handoff or complete"`
	Phase  string         `json:"phase" jsonschema:"the phase it led to"`
	Role   string         `json:"role" jsonschema:"the role it made active"`
	By     string         `json:"by" jsonschema:"the caller"`
	At     time.Time      `json:"at"`
	Clock  gitstate.Clock `json:"clock"`
	Target string         `json:"target,omitempty"`
}

// CyclePrefix starts the names of cycle locks; named-lock tools leave
// them alone (a cycle's lock moves only with its phase).
const CyclePrefix = "cycle/"

func CycleName(feature string) string { return CyclePrefix + feature }

// featurePattern keeps feature names safe in lock names, cycle ids and
// the archive's ref name.
var featurePattern = tools.LazyRegexp(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

func ValidFeature(f string) error {
	if !featurePattern.MatchString(f) {
		return tools.Errorf(tools.InvalidInput, "invalid feature %q: use 1-64 letters, digits, _ and -, starting with a letter or digit", f).With("feature", f)
	}
	return nil
}

// cycleIDPattern is the shape of the ids newCycleID makes.
var cycleIDPattern = tools.LazyRegexp(`^[0-9]{8}T[0-9]{6}Z_[A-Za-z0-9][A-Za-z0-9_-]{0,63}_[0-9a-z]{6}$`)

// isCycleLock reports whether a lock record is a running cycle's.
func isCycleLock(record []byte) bool {
	var v struct {
		Cycle json.RawMessage `json:"cycle"`
	}
	return json.Unmarshal(record, &v) == nil && len(v.Cycle) > 0 && string(v.Cycle) != "null"
}

// validateCycleLock is ValidateRecord's check of a lock that holds a
// cycle: it is the lock of the cycle's feature, its workflow is valid, its
// phase one of it, and the lock is held by the active role.
func validateCycleLock(l Lock) error {
	if l.Cycle == nil {
		if strings.HasPrefix(l.Name, CyclePrefix) && (l.Claim != nil || l.TokenHash != "") {
			return fmt.Errorf("idle cycle lock %q is held", l.Name)
		}
		return nil
	}
	cy := l.Cycle
	switch {
	case ValidFeature(cy.Feature) != nil || l.Name != CycleName(cy.Feature) || !cycleIDPattern.MatchString(cy.CycleID):
		return fmt.Errorf("lock %q holds cycle %q of feature %q", l.Name, cy.CycleID, cy.Feature)
	case cy.Workflow.Validate() != nil:
		return fmt.Errorf("cycle %q: workflow: %w", cy.CycleID, cy.Workflow.Validate())
	case cy.Phase != PhaseComplete && cy.Workflow.Phases[cy.Phase] != cy.ActiveRole:
		return fmt.Errorf("cycle %q: phase %q with active role %q", cy.CycleID, cy.Phase, cy.ActiveRole)
	case l.Claim == nil || l.Claim.Holder != cy.ActiveRole:
		return fmt.Errorf("cycle %q: its lock is not held by the active role %q", cy.CycleID, cy.ActiveRole)
	case l.TokenHash != "" && len(l.TokenHash) != 64:
		return fmt.Errorf("cycle %q: token hash %q", cy.CycleID, l.TokenHash)
	}
	return nil
}

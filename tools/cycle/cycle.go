// Package cycle is seed 001's handoff cycles: sessions (the Session
// record, session_open), the cycle's steps (cycle_start, cycle_status,
// cycle_complete, cycle_archive) and its handoffs (handoff_write,
// handoff_read), one file per tool, and the cycle.* settings. A cycle
// lives in its lock's record (tools/lock's Lock and Cycle), so lock sits
// below it; lock_acquire {session_token} reaches this package through
// the AcquireLock the assembly hands lock.Catalog. The seeds' other names
// for its tools (seed 001's dotted names) are answered here too (unknownTool, its UnknownTool step).
package cycle

import (
	"errors"
	"sort"
	"strings"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/lock"
)

// Handoff states in handoff_status.
const (
	handoffEmpty   = "empty"
	handoffPresent = "present"
)

// newCycleID is seed 001's <UTC time>_<feature>, plus a random tail so
// that two cycles of one feature started in the same second (here, or on
// two machines) never share an archive ref.
func newCycleID(tx *gitstate.Tx, feature string) string {
	id := tx.NewID("x")
	return tx.Now().UTC().Format("20060102T150405Z") + "_" + feature + "_" + id[len(id)-6:]
}

// activeCycle is a running cycle and its lock record.
type activeCycle struct {
	lock  lock.Lock
	cycle *lock.Cycle
}

// getCycle reads the cycle of feature; ok is false when it is idle.
func getCycle(tx *gitstate.Tx, feature string) (activeCycle, bool, error) {
	l, err := lock.Get(tx, lock.CycleName(feature))
	if err != nil || l.Cycle == nil {
		return activeCycle{lock: l}, false, err
	}
	return activeCycle{lock: l, cycle: l.Cycle}, true, nil
}

// activeFeatures lists the features whose cycles are running, sorted.
func activeFeatures(tx *gitstate.Tx) ([]string, error) {
	var out []string
	err := tools.WalkJSON(tx, lock.Dir, func(l lock.Lock) {
		if l.Cycle != nil && strings.HasPrefix(l.Name, lock.CyclePrefix) {
			out = append(out, l.Cycle.Feature)
		}
	})
	sort.Strings(out)
	return out, err
}

// findCycle picks the cycle a call is about: the feature it names, else
// the feature its session was opened for, else the one cycle running.
func findCycle(tx *gitstate.Tx, feature string) (activeCycle, error) {
	if feature == "" {
		running, err := activeFeatures(tx)
		if err != nil {
			return activeCycle{}, err
		}
		switch len(running) {
		case 0:
			return activeCycle{}, tools.Errorf(tools.NoActiveCycle, "no cycle is running; start one with `git codex cycle start <feature>`")
		case 1:
			feature = running[0]
		default:
			return activeCycle{}, tools.Errorf(tools.InvalidInput, "%d cycles are running (%s): name one with feature", len(running), strings.Join(running, ", ")).
				With("features", running)
		}
	}
	if err := lock.ValidFeature(feature); err != nil {
		return activeCycle{}, err
	}
	ac, ok, err := getCycle(tx, feature)
	if err != nil {
		return activeCycle{}, err
	}
	if !ok {
		return activeCycle{}, tools.Errorf(tools.NoActiveCycle, "no cycle of feature %q is running; start one with `git codex cycle start %s`", feature, feature).With("feature", feature)
	}
	return ac, nil
}

// putCycle writes the cycle's lock record after a step by caller.
func putCycle(c *tools.Call, ac activeCycle) error {
	ac.lock.Cycle = ac.cycle
	ac.lock.UpdatedAt, ac.lock.UpdatedBy, ac.lock.Clock = c.Tx.Now(), c.Caller.ID, c.Tx.Clock()
	if ac.cycle != nil {
		ac.cycle.UpdatedAt = c.Tx.Now()
	}
	return c.Tx.Put(lock.Path(ac.lock.Name), ac.lock)
}

// grant makes a new claim of the cycle's lock for role: every step is a
// new grant, so sync sees two machines' steps from one phase as a conflict.
func grant(c *tools.Call, role string) *tools.Claim {
	return &tools.Claim{Holder: role, Clock: c.Tx.Clock(), At: c.Tx.Now()}
}

// record appends a step to the cycle's history.
func (ac activeCycle) record(c *tools.Call, step, target string) {
	ac.cycle.History = append(ac.cycle.History, lock.CycleStep{
		Step: step, Phase: ac.cycle.Phase, Role: ac.cycle.ActiveRole, By: c.Caller.ID, At: c.Tx.Now(), Clock: c.Tx.Clock(), Target: target,
	})
}

// checkLockToken checks a lock token against the cycle's lock: held by the
// session's role, which is the active role, and the token the lock tool
// issued last.
func (ac activeCycle) checkLockToken(s Session, token string) error {
	cy := ac.cycle
	if s.Role != cy.ActiveRole || ac.lock.Claim == nil || ac.lock.Claim.Holder != s.Role {
		return tools.Errorf(tools.LockDenied, "role %s is not active in phase %s of cycle %s (active: %s); see `git codex cycle status`", s.Role, cy.Phase, cy.CycleID, cy.ActiveRole).
			With("activeRole", cy.ActiveRole).With("requestedRole", s.Role).With("phase", cy.Phase)
	}
	if !tools.MatchesHash(token, ac.lock.TokenHash) {
		return tools.Errorf(tools.LockDenied, "the lock token is not the current one for cycle %s (tokens rotate at every handoff); get one with `git codex lock acquire --session-token …`", cy.CycleID).
			With("cycle_id", cy.CycleID).With("role", s.Role)
	}
	return nil
}

// errNoCycle reports whether err is NO_ACTIVE_CYCLE.
func errNoCycle(err error) bool {
	var te *tools.Error
	return errors.As(err, &te) && te.Code == tools.NoActiveCycle
}

// seedToolNames maps seed 001's dotted tool names to ours.
var seedToolNames = map[string]string{
	"session.open": "session_open", "cycle.start": "cycle_start", "cycle.status": "cycle_status",
	"cycle.complete": "cycle_complete", "cycle.archive": "cycle_archive", "lock.acquire": "lock_acquire",
	"handoff.read": "handoff_read", "handoff.write": "handoff_write",
}

// unknownTool is cycle's UnknownTool step (Hooks): seed 001's
// INVALID_TOOL, naming our spelling, for the seed's dotted names; nil for
// any other name (other seeds' names are answered by the packages whose
// tools they mean, tools.Renamed).
func unknownTool(name string) *tools.Error {
	if ours, ok := seedToolNames[name]; ok {
		return tools.Errorf(tools.InvalidTool, "no tool named %q: git codex spells it %s", name, ours).With("tool", name).With("use", ours)
	}
	return nil
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

// AcquireLock issues a new lock token to the session's role, the
// active role of its cycle, which holds the cycle's lock.
func AcquireLock(c *tools.Call, sessionToken, feature string) (lock.LockAcquired, error) {
	s, ac, err := sessionCycle(c, sessionToken, feature)
	if err != nil {
		return lock.LockAcquired{}, err
	}
	cy := ac.cycle
	c.Target(cy.CycleID)
	if s.Role != cy.ActiveRole || ac.lock.Claim == nil || ac.lock.Claim.Holder != s.Role {
		return lock.LockAcquired{}, tools.Errorf(tools.LockDenied, "role is not active for the current phase (%s of cycle %s: %s)", cy.Phase, cy.CycleID, cy.ActiveRole).
			With("activeRole", cy.ActiveRole).With("requestedRole", s.Role)
	}
	token := tools.NewSecret(tools.PrefixLockToken)
	ac.lock.TokenHash = tools.HashSecret(token)
	c.Summarize("%s took the lock of cycle %s as %s", c.Caller.ID, cy.CycleID, s.Role)
	if err := putCycle(c, ac); err != nil {
		return lock.LockAcquired{}, err
	}
	out := ac.lock
	out.Cycle = nil
	return lock.LockAcquired{Lock: out, CycleID: cy.CycleID, Role: s.Role, LockToken: token}, nil
}

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

// Catalog is the cycle tools, the session record kind, the cycle.*
// settings and the UnknownTool hook, for the assembly (tools/builtin).
func Catalog() tools.Catalog {
	return tools.Catalog{
		Tools:      []*tools.Tool{SessionOpen, CycleStart, CycleStatusTool, CycleComplete, CycleArchive, HandoffWrite, HandoffRead},
		Hooks:      tools.Hooks{UnknownTool: []func(string) *tools.Error{unknownTool}},
		Kinds:      []tools.Kind{sessionKind()},
		ConfigKeys: cycleKeys(),
	}
}

package work

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
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

// Handoff states in handoff_status.
const (
	handoffEmpty   = "empty"
	handoffPresent = "present"
)

// cycleLockPrefix starts the names of cycle locks; named-lock tools leave
// them alone (a cycle's lock moves only with its phase).
const cycleLockPrefix = "cycle/"

func cycleLockName(feature string) string { return cycleLockPrefix + feature }

// featurePattern keeps feature names safe in lock names, cycle ids and
// the archive's ref name.
var featurePattern = tools.LazyRegexp(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

func validFeature(f string) error {
	if !featurePattern.MatchString(f) {
		return tools.Errorf(tools.InvalidInput, "invalid feature %q: use 1-64 letters, digits, _ and -, starting with a letter or digit", f).With("feature", f)
	}
	return nil
}

// cycleIDPattern is the shape of the ids newCycleID makes.
var cycleIDPattern = tools.LazyRegexp(`^[0-9]{8}T[0-9]{6}Z_[A-Za-z0-9][A-Za-z0-9_-]{0,63}_[0-9a-z]{6}$`)

// newCycleID is seed 001's <UTC time>_<feature>, plus a random tail so
// that two cycles of one feature started in the same second (here, or on
// two machines) never share an archive ref.
func newCycleID(tx *gitstate.Tx, feature string) string {
	id := tx.NewID("x")
	return tx.Now().UTC().Format("20060102T150405Z") + "_" + feature + "_" + id[len(id)-6:]
}

// activeCycle is a running cycle and its lock record.
type activeCycle struct {
	lock  Lock
	cycle *Cycle
}

// getCycle reads the cycle of feature; ok is false when it is idle.
func getCycle(tx *gitstate.Tx, feature string) (activeCycle, bool, error) {
	l, err := getLock(tx, cycleLockName(feature))
	if err != nil || l.Cycle == nil {
		return activeCycle{lock: l}, false, err
	}
	return activeCycle{lock: l, cycle: l.Cycle}, true, nil
}

// activeFeatures lists the features whose cycles are running, sorted.
func activeFeatures(tx *gitstate.Tx) ([]string, error) {
	var out []string
	err := tools.WalkJSON(tx, dirLocks, func(l Lock) {
		if l.Cycle != nil && strings.HasPrefix(l.Name, cycleLockPrefix) {
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
	if err := validFeature(feature); err != nil {
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
	return c.Tx.Put(lockPath(ac.lock.Name), ac.lock)
}

// grant makes a new claim of the cycle's lock for role: every step is a
// new grant, so sync sees two machines' steps from one phase as a conflict.
func grant(c *tools.Call, role string) *tools.Claim {
	return &tools.Claim{Holder: role, Clock: c.Tx.Clock(), At: c.Tx.Now()}
}

// record appends a step to the cycle's history.
func (ac activeCycle) record(c *tools.Call, step, target string) {
	ac.cycle.History = append(ac.cycle.History, CycleStep{
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

// renamedTools maps the other seeds' tool names to the git codex tools
// that do their job: seed 002's claude_* tools delegate to any agent CLI
// here, so they are agent_*; seed 000 calls create_pull_request create_pr
// in places. They are named in the refusal, not served as aliases: an
// alias would list every such tool twice to every agent (tools/list is
// paid for in tokens each turn) and put two names for one call in the
// audit trail.
var renamedTools = map[string]string{
	"claude_query": "agent_query", "claude_query_stream": "agent_query_stream", "claude_continue": "agent_continue",
	"claude_resume": "agent_resume", "claude_interrupt": "agent_interrupt", "claude_abort": "agent_abort",
	"claude_set_model": "agent_set_model", "claude_set_permission_mode": "agent_set_permission_mode",
	"create_pr": "create_pull_request",
}

// unknownTool is the UnknownTool hook (Hooks): the error for a call to a
// tool that does not exist, when the name is another seed's: seed 001's
// INVALID_TOOL, naming our spelling, for the seed's dotted names;
// TOOL_NOT_FOUND naming the tool that does the job (details.use) for the
// other seeds' names. nil for any other name (the registry's plain
// TOOL_NOT_FOUND).
func unknownTool(name string) *tools.Error {
	if ours, ok := seedToolNames[name]; ok {
		return tools.Errorf(tools.InvalidTool, "no tool named %q: git codex spells it %s", name, ours).With("tool", name).With("use", ours)
	}
	if ours, ok := renamedTools[name]; ok {
		return tools.Errorf(tools.ToolNotFound, "no tool named %q: git codex calls it %s (the same arguments; see `git codex tools %s`)", name, ours, ours).
			With("tool", name).With("use", ours)
	}
	return nil
}

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
		if strings.HasPrefix(l.Name, cycleLockPrefix) && (l.Claim != nil || l.TokenHash != "") {
			return fmt.Errorf("idle cycle lock %q is held", l.Name)
		}
		return nil
	}
	cy := l.Cycle
	switch {
	case validFeature(cy.Feature) != nil || l.Name != cycleLockName(cy.Feature) || !cycleIDPattern.MatchString(cy.CycleID):
		return fmt.Errorf("lock %q holds cycle %q of feature %q", l.Name, cy.CycleID, cy.Feature)
	case cy.Workflow.validate() != nil:
		return fmt.Errorf("cycle %q: workflow: %w", cy.CycleID, cy.Workflow.validate())
	case cy.Phase != PhaseComplete && cy.Workflow.Phases[cy.Phase] != cy.ActiveRole:
		return fmt.Errorf("cycle %q: phase %q with active role %q", cy.CycleID, cy.Phase, cy.ActiveRole)
	case l.Claim == nil || l.Claim.Holder != cy.ActiveRole:
		return fmt.Errorf("cycle %q: its lock is not held by the active role %q", cy.CycleID, cy.ActiveRole)
	case l.TokenHash != "" && len(l.TokenHash) != 64:
		return fmt.Errorf("cycle %q: token hash %q", cy.CycleID, l.TokenHash)
	}
	return nil
}

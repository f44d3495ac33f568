package work

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gitcodex/git-codex/tools"
)

// Workflow is a cycle's phase machine, kept as data in config
// (cycle.workflow) so a team can define its own roles and phases. Each
// phase has the one role that may act in it. A handoff to a target role
// moves the cycle along a transition; completion is its own step, allowed
// from the phases in CompleteFrom, to the phase "complete", where the role
// that completed it archives it.
type Workflow struct {
	Phases       map[string]string `json:"phases" jsonschema:"each phase and the role active in it"`
	Start        string            `json:"start" jsonschema:"the phase a cycle starts in"`
	Transitions  []Transition      `json:"transitions" jsonschema:"the handoffs: from a phase, to a target role, into a phase"`
	CompleteFrom []string          `json:"complete_from" jsonschema:"the phases a cycle may be completed from"`
}

// Transition is one legal handoff: in phase From, a handoff to Target
// moves the cycle to phase To (whose role is Target).
type Transition struct {
	From   string `json:"from"`
	Target string `json:"target"`
	To     string `json:"to"`
}

// PhaseComplete is the phase of a completed cycle, waiting to be archived.
const PhaseComplete = "complete"

// ModeApproval is seed 001's mode: every phase hands over explicitly.
const ModeApproval = "approval"

// DefaultWorkflow is seed 001's: gemini builds the frontend, codex the
// backend, gemini refines (and may send it back to codex) and completes.
func DefaultWorkflow() Workflow {
	return Workflow{
		Phases: map[string]string{"frontend": "gemini", "backend": "codex", "frontend_refine": "gemini"},
		Start:  "frontend",
		Transitions: []Transition{
			{From: "frontend", Target: "codex", To: "backend"},
			{From: "backend", Target: "gemini", To: "frontend_refine"},
			{From: "frontend_refine", Target: "codex", To: "backend"}, // the rework loop
		},
		CompleteFrom: []string{"frontend_refine"},
	}
}

// namePattern is what role and phase names look like: they become parts of
// environment variables and git config keys.
var namePattern = tools.LazyRegexp(`^[a-z][a-z0-9_-]{0,31}$`)

// Roles lists the workflow's roles, sorted.
func (w Workflow) Roles() []string {
	var roles []string
	for _, r := range w.Phases {
		if !slices.Contains(roles, r) {
			roles = append(roles, r)
		}
	}
	sort.Strings(roles)
	return roles
}

// hasRole reports whether role acts in some phase.
func (w Workflow) hasRole(role string) bool { return slices.Contains(w.Roles(), role) }

// next is the transition out of phase for a handoff to target.
func (w Workflow) next(phase, target string) (Transition, bool) {
	for _, t := range w.Transitions {
		if t.From == phase && t.Target == target {
			return t, true
		}
	}
	return Transition{}, false
}

// validate checks that the machine is complete and consistent.
func (w Workflow) validate() error {
	if len(w.Phases) == 0 {
		return fmt.Errorf("no phases")
	}
	for p, r := range w.Phases {
		if !namePattern.MatchString(p) || p == PhaseComplete {
			return fmt.Errorf("phase %q: use 1-32 of a-z, 0-9, _ and -, starting with a letter; %q is reserved", p, PhaseComplete)
		}
		if !namePattern.MatchString(r) || r == tools.HumanInbox {
			return fmt.Errorf("role %q of phase %q: use 1-32 of a-z, 0-9, _ and -, starting with a letter", r, p)
		}
	}
	if _, ok := w.Phases[w.Start]; !ok {
		return fmt.Errorf("start phase %q is not one of the phases", w.Start)
	}
	seen := map[[2]string]bool{}
	for _, t := range w.Transitions {
		from, okf := w.Phases[t.From]
		to, okt := w.Phases[t.To]
		switch {
		case !okf || !okt:
			return fmt.Errorf("transition %s -> %s: both must be phases", t.From, t.To)
		case t.Target != to:
			return fmt.Errorf("transition %s -> %s: its target must be %s, the role of %s", t.From, t.To, to, t.To)
		case from == to:
			return fmt.Errorf("transition %s -> %s: a role cannot hand off to itself", t.From, t.To)
		case seen[[2]string{t.From, t.Target}]:
			return fmt.Errorf("two transitions from %s to target %s", t.From, t.Target)
		}
		seen[[2]string{t.From, t.Target}] = true
	}
	if len(w.CompleteFrom) == 0 {
		return fmt.Errorf("complete_from names no phase: no cycle could end")
	}
	for _, p := range w.CompleteFrom {
		if _, ok := w.Phases[p]; !ok {
			return fmt.Errorf("complete_from: %q is not one of the phases", p)
		}
	}
	return nil
}

// checkWorkflow is cycle.workflow's check: JSON that decodes, strictly, to
// a valid workflow.
func checkWorkflow(raw json.RawMessage) error {
	_, err := parseWorkflow(raw)
	return err
}

func parseWorkflow(raw json.RawMessage) (Workflow, error) {
	var w Workflow
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return Workflow{}, fmt.Errorf("not a workflow: %w", err)
	}
	return w, w.validate()
}

// workflow is the workflow in force: CONFIG_INVALID if cycle.workflow (set
// here or brought by sync) is not a valid one.
func configWorkflow(c *tools.Config) (Workflow, error) {
	k, _ := c.Keys().Lookup("cycle.workflow")
	w, err := parseWorkflow(c.Value(k))
	if err != nil {
		return Workflow{}, tools.Errorf(tools.ConfigInvalid, "config cycle.workflow is invalid (%v); fix it with `git codex config set cycle.workflow '<json>'`", err).With("key", "cycle.workflow")
	}
	return w, nil
}

// cycleKeys are the settings of seed 001's cycles.
func cycleKeys() []tools.ConfigKey {
	return []tools.ConfigKey{
		{Name: "cycle.session_ttl_hours", Kind: "int", Default: defaultSessionTTLHours,
			Doc: "a cycle session unused for longer than this many hours expires (INVALID_SESSION); open a new one"},
		{Name: "cycle.workflow", Kind: "json", Default: DefaultWorkflow(), Check: checkWorkflow,
			Doc: "the phases, roles and handoffs of cycles (JSON); the default is seed 001's frontend -> backend -> frontend_refine -> complete"},
	}
}

package lock

import (
	"fmt"
	"slices"
	"sort"

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

// NamePattern is what role and phase names look like: they become parts of
// environment variables and git config keys.
var NamePattern = tools.LazyRegexp(`^[a-z][a-z0-9_-]{0,31}$`)

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

// HasRole reports whether role acts in some phase.
func (w Workflow) HasRole(role string) bool { return slices.Contains(w.Roles(), role) }

// Next is the transition out of phase for a handoff to target.
func (w Workflow) Next(phase, target string) (Transition, bool) {
	for _, t := range w.Transitions {
		if t.From == phase && t.Target == target {
			return t, true
		}
	}
	return Transition{}, false
}

// Validate checks that the machine is complete and consistent.
func (w Workflow) Validate() error {
	if len(w.Phases) == 0 {
		return fmt.Errorf("no phases")
	}
	for p, r := range w.Phases {
		if !NamePattern.MatchString(p) || p == PhaseComplete {
			return fmt.Errorf("phase %q: use 1-32 of a-z, 0-9, _ and -, starting with a letter; %q is reserved", p, PhaseComplete)
		}
		if !NamePattern.MatchString(r) || r == tools.HumanInbox {
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

package cycle

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/lock"
)

// ModeApproval is seed 001's mode: every phase hands over explicitly.
const ModeApproval = "approval"

// DefaultWorkflow is seed 001's: gemini builds the frontend, codex the
// backend, gemini refines (and may send it back to codex) and completes.
func DefaultWorkflow() lock.Workflow {
	return lock.Workflow{
		Phases: map[string]string{"frontend": "gemini", "backend": "codex", "frontend_refine": "gemini"},
		Start:  "frontend",
		Transitions: []lock.Transition{
			{From: "frontend", Target: "codex", To: "backend"},
			{From: "backend", Target: "gemini", To: "frontend_refine"},
			{From: "frontend_refine", Target: "codex", To: "backend"}, // the rework loop
		},
		CompleteFrom: []string{"frontend_refine"},
	}
}

// checkWorkflow is cycle.workflow's check: JSON that decodes, strictly, to
// a valid workflow.
func checkWorkflow(raw json.RawMessage) error {
	_, err := parseWorkflow(raw)
	return err
}

func parseWorkflow(raw json.RawMessage) (lock.Workflow, error) {
	var w lock.Workflow
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return lock.Workflow{}, fmt.Errorf("not a workflow: %w", err)
	}
	return w, w.Validate()
}

// workflow is the workflow in force: CONFIG_INVALID if cycle.workflow (set
// here or brought by sync) is not a valid one.
func configWorkflow(c *tools.Config) (lock.Workflow, error) {
	k, _ := c.Keys().Lookup("cycle.workflow")
	w, err := parseWorkflow(c.Value(k))
	if err != nil {
		return lock.Workflow{}, tools.Errorf(tools.ConfigInvalid, "config cycle.workflow is invalid (%v); fix it with `git codex config set cycle.workflow '<json>'`", err).With("key", "cycle.workflow")
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

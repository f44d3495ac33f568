package work

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/gitcodex/git-codex/tools"
)

// handoffArrays are the six arrays every handoff payload carries (seed
// 001's handoff schema).
var handoffArrays = []string{"files_modified", "endpoints", "data_shapes", "assumptions", "todos", "notes"}

// maxHandoffBytes bounds a payload: it is kept in the cycle's record,
// which every step of the cycle rewrites.
const maxHandoffBytes = 256 * 1024

// validateHandoff checks a payload against seed 001's schema for a handoff
// from producer to consumer in cycle cy: cycle_id and feature match, the
// producer and consumer match the direction, the six arrays are arrays, and
// extras, if present, is an object. Nothing else is allowed at the top
// level, and no credential git codex issued may ride along (the payload is
// committed). SCHEMA_INVALID names the field.
func validateHandoff(p map[string]any, cy *Cycle, producer, consumer string) error {
	bad := func(field, format string, args ...any) error {
		return tools.Errorf(tools.SchemaInvalid, "handoff payload: "+field+": "+format, args...).With("field", field)
	}
	str := func(field, want string) error {
		v, ok := p[field].(string)
		switch {
		case !ok || v == "":
			return bad(field, "a non-empty string is required")
		case v != want:
			return bad(field, "%q does not match this handoff (%q)", v, want)
		}
		return nil
	}
	for _, f := range []struct{ field, want string }{{"cycle_id", cy.CycleID}, {"feature", cy.Feature}, {"producer", producer}, {"consumer", consumer}} {
		if err := str(f.field, f.want); err != nil {
			return err
		}
	}
	for _, f := range handoffArrays {
		if _, ok := p[f].([]any); !ok {
			return bad(f, "an array is required")
		}
	}
	if x, ok := p["extras"]; ok {
		if _, isObj := x.(map[string]any); !isObj {
			return bad("extras", "must be an object")
		}
	}
	for k := range p {
		if !slices.Contains(append([]string{"cycle_id", "feature", "producer", "consumer", "extras"}, handoffArrays...), k) {
			return bad(k, "unknown field; put extra data under extras")
		}
	}
	b, _ := json.Marshal(p)
	if len(b) > maxHandoffBytes {
		return bad("payload", "%d bytes; the limit is %d", len(b), maxHandoffBytes)
	}
	if kind := tools.SecretIn(string(b)); kind != "" {
		return bad("payload", "holds what looks like a %s; handoffs are committed, so leave it out", kind)
	}
	return nil
}

// HandoffWriteIn is handoff_write's input.
type HandoffWriteIn struct {
	Target       string         `json:"target" jsonschema:"the role the handoff is for, e.g. codex or gemini"`
	Payload      map[string]any `json:"payload" jsonschema:"the handoff: cycle_id, feature, producer, consumer, files_modified, endpoints, data_shapes, assumptions, todos, notes, optional extras"`
	LockToken    string         `json:"lock_token" jsonschema:"the token lock_acquire returned" text:"credential"`
	SessionToken string         `json:"session_token" jsonschema:"the token session_open returned" text:"credential"`
	Feature      string         `json:"feature,omitempty" jsonschema:"the feature whose cycle it is (needed only when several run)"`
}

// HandoffWritten is what handoff_write returns; never a token.
type HandoffWritten struct {
	OK         bool   `json:"ok"`
	CycleID    string `json:"cycle_id"`
	Phase      string `json:"phase"`
	ActiveRole string `json:"active_role"`
	NextStep   string `json:"next_step"`
}

// HandoffWrite hands work to the next role.
var HandoffWrite = tools.Define("handoff_write", "handoff.write",
	"Hand the cycle to the next role (seed 001's handoff.write): the payload, validated against the handoff schema, is stored for the target, the phase moves on and the lock passes to the target role, whose holder gets a fresh token with lock_acquire. Only the active role, with its session and the current lock token.",
	tools.CLI{Path: "handoff write", Args: []string{"target"}},
	func(ctx context.Context, c *tools.Call, in HandoffWriteIn) (HandoffWritten, error) {
		s, ac, err := sessionCycle(c, in.SessionToken, in.Feature)
		if err != nil {
			return HandoffWritten{}, err
		}
		cy := ac.cycle
		c.Target(cy.CycleID)
		if !cy.Workflow.hasRole(in.Target) {
			return HandoffWritten{}, tools.Errorf(tools.InvalidTarget, "target %q is not a role of the workflow (roles: %v)", in.Target, cy.Workflow.Roles()).With("target", in.Target)
		}
		t, ok := cy.Workflow.next(cy.Phase, in.Target)
		if !ok {
			return HandoffWritten{}, tools.Errorf(tools.InvalidPhase, "in phase %s there is no handoff to %s; see the workflow with `git codex config get cycle.workflow`", cy.Phase, in.Target).
				With("phase", cy.Phase).With("target", in.Target)
		}
		if err := ac.checkLockToken(s, in.LockToken); err != nil {
			return HandoffWritten{}, err
		}
		if err := validateHandoff(in.Payload, cy, s.Role, in.Target); err != nil {
			return HandoffWritten{}, err
		}
		now := c.Tx.Now()
		cy.Handoffs[in.Target] = &Handoff{Payload: in.Payload, UpdatedAt: now, UpdatedBy: c.Caller.ID, Session: s.ID}
		cy.HandoffStatus[in.Target] = handoffPresent
		cy.Phase, cy.ActiveRole = t.To, t.Target
		// the lock passes to the target; the producer's token dies with it
		ac.lock.Claim, ac.lock.TokenHash = grant(c, t.Target), ""
		ac.record(c, "handoff", in.Target)
		c.Summarize("%s handed cycle %s from %s to %s (%s)", c.Caller.ID, cy.CycleID, s.Role, t.Target, t.To)
		return HandoffWritten{OK: true, CycleID: cy.CycleID, Phase: cy.Phase, ActiveRole: cy.ActiveRole,
			NextStep: fmt.Sprintf("Provide lock_token to %s", t.Target)}, putCycle(c, ac)
	})

// HandoffReadIn is handoff_read's input.
type HandoffReadIn struct {
	Target  string `json:"target" jsonschema:"whose handoff to read: the role it was written for"`
	Feature string `json:"feature,omitempty" jsonschema:"the feature whose cycle it is (needed only when several run)"`
}

// HandoffRead returns a role's handoff.
var HandoffRead = tools.Define("handoff_read", "handoff.read",
	"Read the handoff last written for a role in a running cycle (seed 001's handoff.read): the payload, or {} when there is none. Needs no session.",
	tools.CLI{Path: "handoff read", Args: []string{"target"}},
	func(ctx context.Context, c *tools.Call, in HandoffReadIn) (map[string]any, error) {
		ac, err := findCycle(c.Tx, in.Feature)
		if errNoCycle(err) {
			c.Summarize("%s read the %s handoff: no cycle", c.Caller.ID, in.Target)
			return map[string]any{}, nil
		}
		if err != nil {
			return nil, err
		}
		cy := ac.cycle
		c.Target(cy.CycleID)
		if !cy.Workflow.hasRole(in.Target) {
			return nil, tools.Errorf(tools.InvalidTarget, "target %q is not a role of the workflow (roles: %v)", in.Target, cy.Workflow.Roles()).With("target", in.Target)
		}
		c.Summarize("%s read the %s handoff of cycle %s", c.Caller.ID, in.Target, cy.CycleID)
		if h := cy.Handoffs[in.Target]; h != nil {
			return h.Payload, nil
		}
		return map[string]any{}, nil
	})

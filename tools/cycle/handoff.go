package cycle

import (
	"encoding/json"
	"slices"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/lock"
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
func validateHandoff(p map[string]any, cy *lock.Cycle, producer, consumer string) error {
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

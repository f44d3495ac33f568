package tools

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
)

// Claim is who holds an exclusive resource (a lock, a task, a coder's
// active review) and since when. Records of an exclusive kind carry it in
// their "claim" field; null means free.
type Claim struct {
	Holder string         `json:"holder"`
	Clock  gitstate.Clock `json:"clock" jsonschema:"Lamport time at which the claim was made"`
	At     time.Time      `json:"at"`
}

// before orders claims for the merge: when two machines each granted a
// resource to a different holder, the claim made first wins: the lower
// Lamport clock, then the earlier time, then the smaller holder id. Any
// total order would make the merge deterministic; this one keeps the
// holder that has most likely been working longest.
func (c Claim) before(d Claim) bool {
	switch {
	case c.Clock != d.Clock:
		return c.Clock < d.Clock
	case !c.At.Equal(d.At):
		return c.At.Before(d.At)
	}
	return c.Holder < d.Holder
}

func (c *Claim) same(d *Claim) bool {
	if c == nil || d == nil {
		return c == d
	}
	return c.Holder == d.Holder && c.Clock == d.Clock && c.At.Equal(d.At)
}

// exclusiveKind is a record kind whose records have at most one holder:
// the invariants sync restores.
type exclusiveKind struct {
	kind     string // "lock", "task", "review"
	prefix   string // where its records live
	resource string // the record's field that names the resource
}

// exclusiveKinds are the record kinds with a holder. Each record is the one
// place its resource's claim lives, so two machines that grant the same
// resource collide on one path, and the merge sees both claims.
func exclusiveKinds() []exclusiveKind {
	return []exclusiveKind{
		{kind: "lock", prefix: dirLocks + "/", resource: "name"},
		{kind: "task", prefix: dirTasks + "/", resource: "id"},
		{kind: "review", prefix: dirActiveReviews + "/", resource: "coder"},
	}
}

func exclusiveKindOf(path string) (exclusiveKind, bool) {
	for _, k := range exclusiveKinds() {
		if strings.HasPrefix(path, k.prefix) {
			return k, true
		}
	}
	return exclusiveKind{}, false
}

// claimOf reads a record's claim; nil when it is free or not a record
// with a claim.
func claimOf(record []byte) *Claim {
	var v struct {
		Claim *Claim `json:"claim"`
	}
	if json.Unmarshal(record, &v) != nil || v.Claim == nil || v.Claim.Holder == "" {
		return nil
	}
	return v.Claim
}

// claimConflict decides between two versions of an exclusive record that
// both sides changed. It is a conflict when each side made a new claim
// (different from the base's) for a different holder: the resource was
// granted twice. The earlier claim wins (Claim.before) and its version of
// the record is taken whole; the loser's version goes into a conflict
// record. Other cases are not conflicts: a claim beats a release made
// concurrently on the other side, and a side that left the base's claim
// alone yields to the side that changed it (that side released and granted
// again, and a forced release mails the holder at the time).
func claimConflict(base, ours, theirs []byte) (winner, loser []byte, ok bool) {
	cb, co, ct := claimOf(base), claimOf(ours), claimOf(theirs)
	if co == nil || ct == nil || co.Holder == ct.Holder || co.same(cb) || ct.same(cb) {
		return nil, nil, false
	}
	if co.before(*ct) {
		return ours, theirs, true
	}
	return theirs, ours, true
}

// mergeClaim is the claim field of a merged exclusive record when there is
// no conflict (see claimConflict), or false to let the field merge decide:
//
//   - a claim on one side, none on the other: if it is the base's claim,
//     the other side released it, and the release stands; if it is new,
//     it was made concurrently with the release, and the claim stands;
//   - claims on both sides, one the base's: the other side's, new;
//   - new claims by the same holder on both sides: the field merge's
//     choice (the newer record's).
func mergeClaim(base, ours, theirs []byte) (*Claim, bool) {
	cb, co, ct := claimOf(base), claimOf(ours), claimOf(theirs)
	switch {
	case co == nil && ct == nil:
		return nil, false
	case co == nil || ct == nil:
		c := co
		if c == nil {
			c = ct
		}
		if c.same(cb) {
			return nil, true
		}
		return c, true
	case co.same(cb):
		return ct, true
	case ct.same(cb):
		return co, true
	}
	return nil, false
}

// mergeExclusive merges two versions of an exclusive record: the earlier
// claim's version whole on a conflict, otherwise field by field with the
// claim decided by mergeClaim.
func mergeExclusive(base, ours, theirs []byte) []byte {
	if winner, _, ok := claimConflict(base, ours, theirs); ok {
		return winner
	}
	var override map[string]json.RawMessage
	if claim, ok := mergeClaim(base, ours, theirs); ok {
		raw, _ := json.Marshal(claim)
		override = map[string]json.RawMessage{"claim": raw}
	}
	if base == nil {
		base = []byte("{}") // created on both sides: every field is new on both
	}
	if merged, ok := mergeFields(base, ours, theirs, override); ok {
		return merged
	}
	return newer(ours, theirs)
}

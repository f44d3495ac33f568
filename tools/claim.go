package tools

import (
	"bytes"
	"encoding/json"
	"slices"
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

// Same reports whether two claims (nil: none) are one grant: the same
// holder, clock and instant.
func (c *Claim) Same(d *Claim) bool {
	if c == nil || d == nil {
		return c == d
	}
	return c.Holder == d.Holder && c.Clock == d.Clock && c.At.Equal(d.At)
}

// ended reports whether the record says its resource has ended for good.
func (k Kind) ended(record []byte) bool {
	if k.Claim == nil || k.Claim.EndField == "" || record == nil {
		return false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(record, &fields) != nil {
		return false
	}
	var v string
	json.Unmarshal(fields[k.Claim.EndField], &v)
	return slices.Contains(k.Claim.EndValues, v)
}

// ClaimOf reads a record's claim; nil when it is free or not a record
// with a claim. Its time is in UTC, so that one instant has one encoding
// (claims from elsewhere may carry a zone).
func ClaimOf(record []byte) *Claim {
	var v struct {
		Claim *Claim `json:"claim"`
	}
	if json.Unmarshal(record, &v) != nil || v.Claim == nil || v.Claim.Holder == "" {
		return nil
	}
	v.Claim.At = v.Claim.At.UTC()
	return v.Claim
}

// EndedSide decides between two versions of an exclusive record when
// exactly one side ended the resource since the base (a task completed or
// cancelled): that side's version is taken whole, because the work is done
// or called off, whatever the other side did meanwhile. A claim the other
// side made in that time is a conflict (restoreInvariants records it).
func EndedSide(kind Kind, base, ours, theirs []byte) (winner, loser []byte, ok bool) {
	if kind.ended(base) {
		return nil, nil, false
	}
	switch eo, et := kind.ended(ours), kind.ended(theirs); {
	case eo && !et:
		return ours, theirs, true
	case et && !eo:
		return theirs, ours, true
	}
	return nil, nil, false
}

// ClaimConflict decides between two versions of an exclusive record that
// both sides changed. It is a conflict when each side made a new claim
// (different from the base's) for a different holder: the resource was
// granted twice. The earlier claim wins (Claim.before) and its version of
// the record is taken whole; the loser's version goes into a conflict
// record.
//
// For a kind whose every claim is a grant of its own (a cycle's lock:
// ClaimRule.EveryClaimGrants), two new claims conflict even for one
// holder, since each side advanced the cycle on its own; between claims
// that tie on clock and time, the smaller encoding wins.
func ClaimConflict(kind Kind, base, ours, theirs []byte) (winner, loser []byte, ok bool) {
	cb, co, ct := ClaimOf(base), ClaimOf(ours), ClaimOf(theirs)
	if co == nil || ct == nil || co.Same(cb) || ct.Same(cb) {
		return nil, nil, false
	}
	if co.Holder == ct.Holder {
		grants := kind.Claim != nil && kind.Claim.EveryClaimGrants != nil && kind.Claim.EveryClaimGrants(ours) && kind.Claim.EveryClaimGrants(theirs)
		if !grants || co.Same(ct) {
			return nil, nil, false
		}
	}
	switch {
	case co.before(*ct):
		return ours, theirs, true
	case ct.before(*co):
		return theirs, ours, true
	case bytes.Compare(ours, theirs) < 0:
		return ours, theirs, true
	}
	return theirs, ours, true
}

// claimSide is the version whose claim a merge without a conflict keeps,
// or nil when both sides have the same claim (then every field merges on
// its own):
//
//   - a claim on one side, none on the other: if it is the base's claim,
//     the other side released it, and the release stands; if it is new,
//     it was made concurrently with the release, and the claim stands;
//   - claims on both sides, one the base's: the other side, which
//     released and granted it again;
//   - new claims by the same holder on both sides: the newer version.
func claimSide(base, ours, theirs []byte) []byte {
	cb, co, ct := ClaimOf(base), ClaimOf(ours), ClaimOf(theirs)
	switch {
	case co.Same(ct):
		return nil
	case co == nil || ct == nil:
		held, free := ours, theirs
		if co == nil {
			held, free = theirs, ours
		}
		if ClaimOf(held).Same(cb) {
			return free
		}
		return held
	case co.Same(cb):
		return theirs
	case ct.Same(cb):
		return ours
	}
	return newer(ours, theirs)
}

// mergeExclusive merges two versions of an exclusive record: the version
// that ended the resource whole (endedSide), or the earlier claim's whole
// on a conflict (claimConflict); otherwise field by field, with the claim
// (as that side encoded it, extra members included) and its coupled fields
// taken together from claimSide's version.
func mergeExclusive(kind Kind, base, ours, theirs []byte) []byte {
	if winner, _, ok := EndedSide(kind, base, ours, theirs); ok {
		return winner
	}
	if winner, _, ok := ClaimConflict(kind, base, ours, theirs); ok {
		return winner
	}
	var override map[string]json.RawMessage
	if side := claimSide(base, ours, theirs); side != nil {
		fields, ok := parseObject(side)
		if !ok {
			return newer(ours, theirs)
		}
		values := fields.values()
		override = map[string]json.RawMessage{}
		for _, f := range append([]string{"claim"}, kind.Claim.Coupled...) {
			override[f] = values[f] // nil: absent on that side, so absent in the merge
		}
	}
	if base == nil {
		base = []byte("{}") // created on both sides: every field is new on both
	}
	if merged, ok := mergeFields(base, ours, theirs, override); ok {
		return merged
	}
	return newer(ours, theirs)
}

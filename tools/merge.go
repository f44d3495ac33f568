package tools

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/gitcodex/git-codex/gitstate"
)

// MergeRecord is the sync merge's rule for a record both sides changed
// (a gitstate.Resolver). It is symmetric in ours and theirs and looks at
// nothing but the three versions, so every machine merges to the same tree:
//
//  1. Deleted on one side, changed on the other: the changed record stays;
//     nothing recorded is lost.
//  2. The config record merges key by key: each key takes the entry with
//     the higher clock (ties: the larger set_by, then the larger value,
//     then the later set_at).
//  3. Records with a holder (locks, tasks, active reviews) follow
//     mergeExclusive: if both sides granted the resource to different
//     holders, the earlier claim's version is taken whole, and the merge's
//     finishing step (restoreInvariants) records the conflict and mails
//     the loser; otherwise the claim and the fields that go with it (a
//     task's state, a lock's reason) come together from one side.
//  4. Every other record merges field by field against the base
//     (mergeFields): a field one side changed takes that side's value; a
//     field both changed takes the newer version's, newer meaning the
//     higher "clock" (mutable records carry the clock of their last
//     change), then the larger actor id (updated_by, read_by), then the
//     larger encoding. Records without a base (the same id created on both
//     sides, which ids make all but impossible) are taken whole by the
//     same order.
func (t KindTable) MergeRecord(path string, base, ours, theirs []byte) []byte {
	switch {
	case ours == nil:
		return theirs
	case theirs == nil:
		return ours
	case path == PathConfig:
		if merged, ok := mergeConfig(ours, theirs); ok {
			return merged
		}
	}
	if kind, ok := t.ClaimKindOf(path); ok {
		return mergeExclusive(kind, base, ours, theirs)
	}
	if merged, ok := mergeFields(base, ours, theirs, nil); ok {
		return merged
	}
	return newer(ours, theirs)
}

var _ gitstate.Resolver = KindTable(nil).MergeRecord

// newer picks the version with the higher clock, then the larger bytes.
func newer(a, b []byte) []byte {
	va, vb := versionOf(a), versionOf(b)
	switch {
	case va.Clock != vb.Clock:
		if va.Clock > vb.Clock {
			return a
		}
		return b
	case va.actor() != vb.actor():
		if va.actor() > vb.actor() {
			return a
		}
		return b
	case bytes.Compare(a, b) >= 0:
		return a
	}
	return b
}

// version is what decides between two versions of a record: the clock of
// its last change and, for ties, who made it.
type version struct {
	Clock     gitstate.Clock `json:"clock"`
	UpdatedBy string         `json:"updated_by"` // agents, tasks, locks
	ReadBy    string         `json:"read_by"`    // mail
}

func (v version) actor() string { return v.UpdatedBy + v.ReadBy }

func versionOf(record []byte) version {
	var v version
	json.Unmarshal(record, &v)
	return v
}

func mergeConfig(a, b []byte) ([]byte, bool) {
	var ca, cb Config
	if json.Unmarshal(a, &ca) != nil || json.Unmarshal(b, &cb) != nil {
		return nil, false
	}
	out := Config{Entries: map[string]ConfigEntry{}}
	keys := map[string]bool{}
	for k := range ca.Entries {
		keys[k] = true
	}
	for k := range cb.Entries {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		ea, oka := ca.Entries[k]
		eb, okb := cb.Entries[k]
		switch {
		case !oka:
			out.Entries[k] = eb
		case !okb:
			out.Entries[k] = ea
		default:
			out.Entries[k] = newerEntry(ea, eb)
		}
	}
	merged, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, false
	}
	return append(merged, '\n'), true
}

func newerEntry(a, b ConfigEntry) ConfigEntry {
	switch {
	case a.Clock != b.Clock:
		if a.Clock > b.Clock {
			return a
		}
		return b
	case a.SetBy != b.SetBy:
		if a.SetBy > b.SetBy {
			return a
		}
		return b
	case !bytes.Equal(a.Value, b.Value):
		if bytes.Compare(a.Value, b.Value) > 0 {
			return a
		}
		return b
	case !a.SetAt.Equal(b.SetAt):
		// the same value set by the same caller at the same clock on two
		// machines: the later wall-clock time, so that the answer does
		// not depend on which side merges.
		if a.SetAt.After(b.SetAt) {
			return a
		}
		return b
	}
	// equal but for encoding (one instant written in two zones): the
	// larger encoding, again whichever side merges.
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if bytes.Compare(ja, jb) >= 0 {
		return a
	}
	return b
}

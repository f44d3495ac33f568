package tools

import (
	"bytes"
	"encoding/json"
	"slices"
)

// mergeFields merges two versions of a JSON object record field by field
// against their base: a top-level field that only one side changed takes
// that side's value, so concurrent changes to different fields (one
// machine sets an agent's state, the other its worktree) both survive. A
// field both sides changed takes the value of the newer version (newer:
// clock, then actor, then bytes), which makes the result the same in
// either order. Fields come out in the newer version's order, with the
// other's extra fields after the field they follow there (so two versions
// of one Go struct keep its order), indented like tx.Put's records.
//
// Fields named in override take the given value whatever the sides say
// (a nil value: the field is left out).
// It reports false when a version is not a JSON object or there is no
// base (two records created apart at one path have no fields in common to
// merge); the caller then takes one version whole.
func mergeFields(base, ours, theirs []byte, override map[string]json.RawMessage) ([]byte, bool) {
	if base == nil {
		return nil, false
	}
	b, okb := parseObject(base)
	o, oko := parseObject(ours)
	t, okt := parseObject(theirs)
	if !okb || !oko || !okt {
		return nil, false
	}
	first, second := o, t
	if bytes.Equal(newer(ours, theirs), theirs) {
		first, second = t, o
	}
	bv := b.values()
	ov, tv := o.values(), t.values()
	newerValues := first.values()
	var buf bytes.Buffer
	buf.WriteByte('{')
	n := 0
	emit := func(key string) {
		ov, inO := ov[key]
		tv, inT := tv[key]
		bv, inB := bv[key]
		var v json.RawMessage
		var present bool
		switch o, ok := override[key]; {
		case ok:
			v, present = o, o != nil
		case inO == inT && bytes.Equal(ov, tv):
			v, present = ov, inO
		case inO == inB && bytes.Equal(ov, bv):
			v, present = tv, inT
		case inT == inB && bytes.Equal(tv, bv):
			v, present = ov, inO
		default:
			v, present = newerValues[key]
		}
		if !present {
			return
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		n++
		k, _ := json.Marshal(key)
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	for _, key := range mergeOrder(first, second) {
		emit(key)
	}
	// Fields only the base had were deleted on both sides: gone.
	buf.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, buf.Bytes(), "", "  "); err != nil {
		return nil, false
	}
	out.WriteByte('\n')
	return out.Bytes(), true
}

// field is one top-level member of a JSON object, its value compacted.
type field struct {
	key string
	val json.RawMessage
}

type object []field

func (o object) values() map[string]json.RawMessage {
	m := make(map[string]json.RawMessage, len(o))
	for _, f := range o {
		m[f.key] = f.val
	}
	return m
}

// parseObject splits a JSON object into its members, in order.
func parseObject(data []byte) (object, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var out object
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			return nil, false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		var c bytes.Buffer
		if err := json.Compact(&c, raw); err != nil {
			return nil, false
		}
		out = append(out, field{key: key, val: c.Bytes()})
	}
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	if dec.More() {
		return nil, false
	}
	return out, true
}

// mergeOrder lists the keys of first and second: first's in order, and
// each key only second has right after the key it follows in second.
func mergeOrder(first, second object) []string {
	keys := make([]string, 0, len(first)+len(second))
	pos := map[string]int{}
	for _, f := range first {
		if _, dup := pos[f.key]; !dup {
			pos[f.key] = len(keys)
			keys = append(keys, f.key)
		}
	}
	at := 0 // where the next key only second has goes
	for _, f := range second {
		if i, ok := pos[f.key]; ok {
			at = i + 1
			continue
		}
		keys = slices.Insert(keys, at, f.key)
		for k, i := range pos {
			if i >= at {
				pos[k] = i + 1
			}
		}
		pos[f.key] = at
		at++
	}
	return keys
}

package gitstate

import (
	"github.com/go-git/go-git/v5/plumbing"
)

// keptRecord is an entry of a kept directory's tree: a record's part,
// by its name and blob id (Leaf's part of the same path and bytes), or a
// subdirectory's tree id (dir), which lets ReadKept walk kept trees.
type keptRecord struct {
	name string
	blob plumbing.Hash // the blob's id, or the subdirectory's tree's
	part any           // keptBytes until used
	dir  bool
}

// keptRecords are the records of a directory whose part a Reduce makes
// afresh: those kept of the tree last reduced there (old: the tip's set's
// and, for a past state, the past states' set's), and those of this tree
// (now). A record that is in old with the same name and blob is not read:
// a day's changes to a month's mail change ~2.8k of its ~21.5k
// directories but few of the records in them, and a state a week back
// holds 49,144 records of which 41 are not at the tip (issue 27).
type keptRecords struct {
	old   []keptRecord
	byKey map[recordKey]int // old's, in a big directory
	now   []keptRecord
}

// recordKey is a record by name and blob: the two sets may hold one name
// with two blobs (a mail read since the past state).
type recordKey struct {
	name string
	blob plumbing.Hash
}

// keptRecordsOf is what sets (nil ones left out) keep of dir's records.
func (m *reduceMemo) keptRecordsOf(dir string, sets ...*deepSet) *keptRecords {
	kr := &keptRecords{}
	for _, set := range sets {
		if set == nil {
			continue
		}
		m.mu.Lock()
		p := set.parts[dir]
		m.mu.Unlock()
		var recs []keptRecord
		switch v := p.records.(type) {
		case []keptRecord:
			recs = v
		case keptBytes:
			recs, _ = decodeRecords(v) // (the file's sum held: bytes this wrote)
		}
		if kr.old == nil {
			kr.old = recs
		} else { // a copy: the set's own is not to grow
			kr.old = append(kr.old[:len(kr.old):len(kr.old)], recs...)
		}
	}
	if len(kr.old) > 16 {
		kr.byKey = make(map[recordKey]int, len(kr.old))
		for i, rec := range kr.old {
			if k := (recordKey{rec.name, rec.blob}); !rec.dir {
				if _, dup := kr.byKey[k]; !dup {
					kr.byKey[k] = i
				}
			}
		}
	}
	return kr
}

// find is the kept part of the record name, blob, if there is one.
func (kr *keptRecords) find(r Reduction, name string, blob plumbing.Hash) (any, bool) {
	if kr == nil {
		return nil, false
	}
	i := -1
	if kr.byKey != nil {
		if j, ok := kr.byKey[recordKey{name, blob}]; ok {
			i = j
		}
	} else {
		for j := range kr.old {
			if rec := &kr.old[j]; rec.name == name && rec.blob == blob && !rec.dir {
				i = j
				break
			}
		}
	}
	if i < 0 {
		return nil, false
	}
	v := kr.old[i].part
	if b, raw := v.(keptBytes); raw {
		var err error
		if v, err = r.Keep.Decode(b); err != nil {
			return nil, false
		}
	}
	// kept as it was: bytes read from a file are written again as they
	// are, not encoded anew (a past state's ~23k records a week back)
	kr.now = append(kr.now, keptRecord{name: name, blob: blob, part: kr.old[i].part})
	return v, true
}

// add notes a record's part made afresh.
func (kr *keptRecords) add(name string, blob plumbing.Hash, v any) {
	if kr != nil {
		kr.now = append(kr.now, keptRecord{name: name, blob: blob, part: v})
	}
}

// addDir notes a subdirectory and its tree.
func (kr *keptRecords) addDir(name string, tree plumbing.Hash) {
	if kr != nil {
		kr.now = append(kr.now, keptRecord{name: name, blob: tree, dir: true})
	}
}

// made is the records of the tree just reduced (nil when it has none).
func (kr *keptRecords) made() any {
	if kr == nil || len(kr.now) == 0 {
		return nil
	}
	return kr.now
}

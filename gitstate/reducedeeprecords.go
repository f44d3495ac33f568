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
// afresh: those kept of the tree last reduced there (old), and those of
// this tree (now). A record that is in both with the same blob is not
// read: a day's changes to a month's mail change ~2.8k of its ~21.5k
// directories but few of the records in them, and a state a week back
// holds 49,144 records of which 41 are not at the tip (issue 27).
type keptRecords struct {
	old    []keptRecord
	byName map[string]int // old's, in a big directory
	now    []keptRecord
}

// keptRecordsOf is what set keeps of dir's records.
func (m *reduceMemo) keptRecordsOf(set *deepSet, dir string) *keptRecords {
	m.mu.Lock()
	p := set.parts[dir]
	m.mu.Unlock()
	kr := &keptRecords{}
	switch v := p.records.(type) {
	case []keptRecord:
		kr.old = v
	case keptBytes:
		kr.old, _ = decodeRecords(v) // (the file's sum held: bytes this wrote)
	}
	if len(kr.old) > 16 {
		kr.byName = make(map[string]int, len(kr.old))
		for i, rec := range kr.old {
			kr.byName[rec.name] = i
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
	if kr.byName != nil {
		if j, ok := kr.byName[name]; ok {
			i = j
		}
	} else {
		for j := range kr.old {
			if kr.old[j].name == name {
				i = j
				break
			}
		}
	}
	if i < 0 || kr.old[i].dir || kr.old[i].blob != blob {
		return nil, false
	}
	v := kr.old[i].part
	if b, raw := v.(keptBytes); raw {
		var err error
		if v, err = r.Keep.Decode(b); err != nil {
			return nil, false
		}
	}
	kr.now = append(kr.now, keptRecord{name: name, blob: blob, part: v})
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

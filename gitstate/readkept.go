package gitstate

import (
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// ReadKept is Read of a record below dir, which r reduced with a deep
// keep (KeepParts.Depth): the trees on the way are taken from the
// entries the keep holds where it holds the very trees this snapshot has
// (a tree id names the entries), and read from git elsewhere. The page
// reads the newest 300 records of each kind after its reduce: by path,
// that read ~1,200 trees no reduce had read (the tip's parts came from
// the file), ~25 ms of a fresh server's ~80 ms first answer (issue 27).
func (sn *Snapshot) ReadKept(r Reduction, dir, path string) ([]byte, error) {
	dir = strings.Trim(dir, "/")
	rel, ok := strings.CutPrefix(path, dir+"/")
	if r.Keep == nil || r.Keep.Depth <= 1 || dir == "" || !ok {
		return sn.Read(path)
	}
	m := &sn.s.reduced
	set, past := m.deepSetOf(r, false), (*deepSet)(nil)
	if r.Keep.ReadOnly {
		past = m.deepSetOf(r, true) // a past state's trees may be there
	}
	if set == nil && past == nil {
		return sn.Read(path)
	}
	parts, err := splitPath(dir)
	if err != nil {
		return nil, err
	}
	e, err := sn.lookup(parts)
	if err != nil || e == nil || e.Mode != filemode.Dir {
		return sn.Read(path)
	}
	cur, tree := dir, e.Hash
	names := strings.Split(rel, "/")
	for i, name := range names {
		rec, ok := m.keptEntry(set, cur, tree, name)
		if !ok {
			rec, ok = m.keptEntry(past, cur, tree, name)
		}
		if !ok || rec.dir != (i < len(names)-1) {
			return sn.Read(path)
		}
		if !rec.dir {
			b, err := sn.s.readBlob(rec.blob)
			return b, sn.note(err)
		}
		cur, tree = cur+"/"+name, rec.blob
	}
	return sn.Read(path)
}

// keptEntry is the entry name of dir's tree tree, if set holds that
// tree's entries.
func (m *reduceMemo) keptEntry(set *deepSet, dir string, tree plumbing.Hash, name string) (keptRecord, bool) {
	if set == nil {
		return keptRecord{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := set.parts[dir]
	if !ok || p.tree != tree {
		return keptRecord{}, false
	}
	recs, ok := p.records.([]keptRecord)
	if b, raw := p.records.(keptBytes); raw {
		var err error
		if recs, err = decodeRecords(b); err != nil {
			return keptRecord{}, false
		}
		p.records, ok = recs, true
		set.parts[dir] = p // decoded once
	}
	if !ok {
		return keptRecord{}, false
	}
	// entries are in the tree's order, names unique: a binary search
	// would need git's order for directories; a directory holds few
	for _, rec := range recs {
		if rec.name == name {
			return rec, true
		}
	}
	return keptRecord{}, false
}

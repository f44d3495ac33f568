package gitstate

import (
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// build writes the transaction's new state and returns its root tree. Only
// the trees along changed paths are rewritten; every other subtree keeps its
// hash, so a transaction costs the depth of its paths, not the state's size.
func (tx *Tx) build() (plumbing.Hash, error) {
	changes := make(map[string][]byte, len(tx.pending))
	for p, b := range tx.pending {
		changes[p] = b
	}
	h, _, err := tx.base.s.buildTree(tx.base, tx.base.root, changes)
	return h, err
}

// buildTree applies changes (paths relative to the tree at base) and writes
// the resulting tree. empty reports that nothing is left, so the parent drops
// the entry; the root is written even when empty.
func (s *Store) buildTree(sn *Snapshot, base plumbing.Hash, changes map[string][]byte) (h plumbing.Hash, empty bool, err error) {
	entries := map[string]object.TreeEntry{}
	if !base.IsZero() {
		t, err := sn.tree(base)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		for _, e := range t.Entries {
			entries[e.Name] = e
		}
	}
	if len(changes) == 0 {
		return base, len(entries) == 0, nil
	}
	subs := map[string]map[string][]byte{}
	for p, b := range changes {
		name, rest, isDir := strings.Cut(p, "/")
		if !isDir {
			if b == nil {
				delete(entries, name)
				continue
			}
			bh, err := s.writeBlob(b)
			if err != nil {
				return plumbing.ZeroHash, false, err
			}
			entries[name] = object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: bh}
			continue
		}
		if subs[name] == nil {
			subs[name] = map[string][]byte{}
		}
		subs[name][rest] = b
	}
	for name, sub := range subs {
		var childBase plumbing.Hash
		if e, ok := entries[name]; ok && e.Mode == filemode.Dir {
			childBase = e.Hash
		}
		ch, chEmpty, err := s.buildTree(sn, childBase, sub)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		if chEmpty {
			delete(entries, name)
			continue
		}
		entries[name] = object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: ch}
	}
	t := &object.Tree{Entries: make([]object.TreeEntry, 0, len(entries))}
	for _, e := range entries {
		t.Entries = append(t.Entries, e)
	}
	sort.Sort(object.TreeEntrySorter(t.Entries))
	h, err = s.writeObject(t)
	return h, len(t.Entries) == 0, err
}

package gitstate

import (
	"fmt"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// build writes the transaction's new state and returns its root tree. Only
// the trees along changed paths are rewritten; every other subtree keeps its
// hash, so a transaction costs the depth of its paths, not the state's size.
func (tx *Tx) build(out *gitrepo.Batch) (plumbing.Hash, error) {
	h, _, err := buildTree(tx.base, out, "", tx.base.root, tx.pending)
	if err == nil && h.IsZero() {
		// nothing yet and nothing put (an init that writes no record): the
		// commit still needs a tree, the empty one, not the zero hash
		h, err = out.Encode(plumbing.TreeObject, &gitrepo.Tree{})
	}
	return h, err
}

// buildTree applies changes (paths relative to the tree at base, which is at
// dir) and adds the resulting tree and blobs to out. empty reports that nothing is left, so
// the parent drops the entry; the root is written even when empty.
//
// A name holds a record or a directory, never both: a change that would need
// both (a record put where a directory keeps records, or records put under a
// name that stays a record) fails with ErrInvalidPath instead of silently
// dropping one side. Deleting a name that is a directory changes nothing:
// Delete removes records.
func buildTree(sn *Snapshot, out *gitrepo.Batch, dir string, base plumbing.Hash, changes map[string][]byte) (h plumbing.Hash, empty bool, err error) {
	entries := map[string]gitrepo.TreeEntry{}
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
	records := map[string][]byte{} // name -> new content, nil to delete
	subs := map[string]map[string][]byte{}
	for p, b := range changes {
		name, rest, isDir := strings.Cut(p, "/")
		if !isDir {
			records[name] = b
			continue
		}
		if subs[name] == nil {
			subs[name] = map[string][]byte{}
		}
		subs[name][rest] = b
	}
	// directories first, so the records below see what is left of them.
	for name, sub := range subs {
		e, exists := entries[name]
		isTree := exists && e.Mode == filemode.Dir
		var childBase plumbing.Hash
		if isTree {
			childBase = e.Hash
		}
		ch, chEmpty, err := buildTree(sn, out, path.Join(dir, name), childBase, sub)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		if chEmpty {
			if isTree {
				delete(entries, name)
			}
			continue
		}
		stillRecord := exists && !isTree
		if b, ok := records[name]; ok {
			stillRecord = b != nil
		}
		if stillRecord {
			return plumbing.ZeroHash, false, fmt.Errorf("gitstate: %s is a record, it cannot hold records: %w", path.Join(dir, name), ErrInvalidPath)
		}
		entries[name] = gitrepo.TreeEntry{Name: name, Mode: filemode.Dir, Hash: ch}
	}
	for name, b := range records {
		e, exists := entries[name]
		isTree := exists && e.Mode == filemode.Dir
		if b == nil {
			if exists && !isTree {
				delete(entries, name)
			}
			continue
		}
		if isTree {
			return plumbing.ZeroHash, false, fmt.Errorf("gitstate: %s is a directory of records, it cannot be a record: %w", path.Join(dir, name), ErrInvalidPath)
		}
		bh := out.Add(plumbing.BlobObject, b)
		entries[name] = gitrepo.TreeEntry{Name: name, Mode: filemode.Regular, Hash: bh}
	}
	t := &gitrepo.Tree{Entries: make([]gitrepo.TreeEntry, 0, len(entries))}
	for _, e := range entries {
		t.Entries = append(t.Entries, e)
	}
	gitrepo.SortTreeEntries(t.Entries)
	h, err = out.Encode(plumbing.TreeObject, t)
	return h, len(t.Entries) == 0, err
}

package gitstate

import (
	"bytes"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Resolver decides a record that both sides of a merge changed, each in its
// own way. base, ours and theirs are the record's contents at the merge base
// and on each side; nil means absent. It returns the merged content (nil to
// leave the record absent).
//
// A Resolver must be symmetric, resolve(p, b, o, t) == resolve(p, b, t, o),
// and depend on nothing but its arguments: that is what makes merging A into
// B give the same tree as merging B into A, on any machine.
type Resolver func(path string, base, ours, theirs []byte) []byte

// MergeReport says what a three-way merge of state trees did.
type MergeReport struct {
	// Resolved lists the paths that both sides changed, which the
	// resolver decided, in path order.
	Resolved []string
}

// mergeTrees merges three state trees (zero hashes are empty trees) and
// writes the result. Whole subtrees that only one side changed are taken by
// hash without being read, so the cost follows the size of the two sides'
// changes, not the size of the state.
func (s *Store) mergeTrees(base, ours, theirs plumbing.Hash, resolve Resolver) (plumbing.Hash, MergeReport, error) {
	m := &merger{s: s, resolve: resolve}
	root, err := m.merge("", dirNode(base), dirNode(ours), dirNode(theirs))
	if err != nil {
		return plumbing.ZeroHash, MergeReport{}, err
	}
	if root.absent() {
		h, err := s.writeObject(&object.Tree{})
		return h, m.report, err
	}
	sort.Strings(m.report.Resolved)
	return root.hash, m.report, nil
}

// node is one name in one of the three trees.
type node struct {
	hash plumbing.Hash // zero: absent
	dir  bool
}

func dirNode(h plumbing.Hash) node { return node{hash: h, dir: true} }

func (n node) absent() bool { return n.hash.IsZero() }

type merger struct {
	s       *Store
	resolve Resolver
	report  MergeReport
}

// merge returns the merged node for path.
func (m *merger) merge(path string, b, o, t node) (node, error) {
	switch {
	case o == t:
		return o, nil
	case o == b:
		return t, nil
	case t == b:
		return o, nil
	}
	// Both sides changed path. Directories (or a directory and nothing)
	// merge name by name; records go to the resolver.
	if (o.dir || o.absent()) && (t.dir || t.absent()) && !(o.absent() && t.absent()) {
		return m.mergeDirs(path, b, o, t)
	}
	if o.dir || t.dir {
		// A record on one side where the other has a directory: keep the
		// directory (it holds records; the lone record's path is invalid in
		// a state that has the directory).
		if o.dir {
			return o, nil
		}
		return t, nil
	}
	return m.mergeRecord(path, b, o, t)
}

func (m *merger) mergeDirs(path string, b, o, t node) (node, error) {
	be, err := m.entries(b)
	if err != nil {
		return node{}, err
	}
	oe, err := m.entries(o)
	if err != nil {
		return node{}, err
	}
	te, err := m.entries(t)
	if err != nil {
		return node{}, err
	}
	names := map[string]bool{}
	for _, es := range []map[string]node{be, oe, te} {
		for n := range es {
			names[n] = true
		}
	}
	tree := &object.Tree{}
	for name := range names {
		child := name
		if path != "" {
			child = path + "/" + name
		}
		r, err := m.merge(child, be[name], oe[name], te[name])
		if err != nil {
			return node{}, err
		}
		if r.absent() {
			continue
		}
		mode := filemode.Regular
		if r.dir {
			mode = filemode.Dir
		}
		tree.Entries = append(tree.Entries, object.TreeEntry{Name: name, Mode: mode, Hash: r.hash})
	}
	if len(tree.Entries) == 0 {
		return node{}, nil
	}
	sort.Sort(object.TreeEntrySorter(tree.Entries))
	h, err := m.s.writeObject(tree)
	return node{hash: h, dir: true}, err
}

// entries lists a directory node's children; records and absent nodes have
// none.
func (m *merger) entries(n node) (map[string]node, error) {
	out := map[string]node{}
	if n.absent() || !n.dir {
		return out, nil
	}
	t, err := m.s.readTree(n.hash)
	if err != nil {
		return nil, err
	}
	for _, e := range t.Entries {
		out[e.Name] = node{hash: e.Hash, dir: e.Mode == filemode.Dir}
	}
	return out, nil
}

func (m *merger) mergeRecord(path string, b, o, t node) (node, error) {
	var contents [3][]byte
	for i, n := range []node{b, o, t} {
		if n.absent() || n.dir {
			continue
		}
		data, err := m.s.readBlob(n.hash)
		if err != nil {
			return node{}, err
		}
		contents[i] = data
	}
	merged := m.resolve(path, contents[0], contents[1], contents[2])
	m.report.Resolved = append(m.report.Resolved, path)
	switch {
	case merged == nil:
		return node{}, nil
	case contents[1] != nil && bytes.Equal(merged, contents[1]):
		return o, nil
	case contents[2] != nil && bytes.Equal(merged, contents[2]):
		return t, nil
	}
	h, err := m.s.writeBlob(merged)
	return node{hash: h}, err
}

package gitstate

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Snapshot is a read-only view of the state at one commit. Reads are tree
// lookups: a record's cost depends on its path's depth, not on how many
// records or commits the state has.
type Snapshot struct {
	s      *Store
	commit plumbing.Hash // zero for the empty state before init
	root   plumbing.Hash // zero for the empty tree
	clock  Clock
	when   time.Time
	trees  map[plumbing.Hash]*object.Tree
}

// Entry is one name in a directory listing.
type Entry struct {
	Name string
	Dir  bool
}

// Commit is the hash of the commit the snapshot shows ("" before init).
func (sn *Snapshot) Commit() string {
	if sn.commit.IsZero() {
		return ""
	}
	return sn.commit.String()
}

// Clock is the Lamport time of the snapshot's commit.
func (sn *Snapshot) Clock() Clock { return sn.clock }

// Time is when the snapshot's commit was written.
func (sn *Snapshot) Time() time.Time { return sn.when }

// Get decodes the JSON record at path into v. It returns an error wrapping
// ErrNotFound when there is no record.
func (sn *Snapshot) Get(path string, v any) error {
	return decodeRecord(path, sn.Read, v)
}

// Read returns the raw bytes of the record at path.
func (sn *Snapshot) Read(path string) ([]byte, error) {
	parts, err := splitPath(path)
	if err != nil {
		return nil, err
	}
	e, err := sn.lookup(parts)
	if err != nil {
		return nil, err
	}
	if e == nil || e.Mode == filemode.Dir {
		return nil, fmt.Errorf("gitstate: %s: %w", path, ErrNotFound)
	}
	return sn.s.readBlob(e.Hash)
}

// List returns the names directly under dir in git's order (byte order,
// which is time order for ids made by NewID). A missing directory is empty.
func (sn *Snapshot) List(dir string) ([]Entry, error) {
	t, err := sn.dirTree(dir)
	if err != nil || t == nil {
		return nil, err
	}
	out := make([]Entry, len(t.Entries))
	for i, e := range t.Entries {
		out[i] = Entry{Name: e.Name, Dir: e.Mode == filemode.Dir}
	}
	return out, nil
}

// Walk calls fn for every record under dir, recursively, in path order.
func (sn *Snapshot) Walk(dir string, fn func(path string, data []byte) error) error {
	paths, err := sn.walkPaths(dir)
	if err != nil {
		return err
	}
	for _, p := range paths {
		b, err := sn.s.readBlob(p.hash)
		if err != nil {
			return err
		}
		if err := fn(p.path, b); err != nil {
			return err
		}
	}
	return nil
}

type pathHash struct {
	path string
	hash plumbing.Hash
}

func (sn *Snapshot) walkPaths(dir string) ([]pathHash, error) {
	t, err := sn.dirTree(dir)
	if err != nil || t == nil {
		return nil, err
	}
	var out []pathHash
	var walk func(prefix string, t *object.Tree) error
	walk = func(prefix string, t *object.Tree) error {
		for _, e := range t.Entries {
			p := e.Name
			if prefix != "" {
				p = prefix + "/" + e.Name
			}
			if e.Mode != filemode.Dir {
				out = append(out, pathHash{p, e.Hash})
				continue
			}
			sub, err := sn.tree(e.Hash)
			if err != nil {
				return err
			}
			if err := walk(p, sub); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(strings.Trim(dir, "/"), t)
}

func (sn *Snapshot) dirTree(dir string) (*object.Tree, error) {
	if sn.root.IsZero() {
		return nil, nil
	}
	dir = strings.Trim(dir, "/")
	if dir == "" {
		return sn.tree(sn.root)
	}
	parts, err := splitPath(dir)
	if err != nil {
		return nil, err
	}
	e, err := sn.lookup(parts)
	if err != nil || e == nil || e.Mode != filemode.Dir {
		return nil, err
	}
	return sn.tree(e.Hash)
}

// lookup walks the trees along parts; it returns nil when a component is
// missing.
func (sn *Snapshot) lookup(parts []string) (*object.TreeEntry, error) {
	if sn.root.IsZero() {
		return nil, nil
	}
	h := sn.root
	for i, name := range parts {
		t, err := sn.tree(h)
		if err != nil {
			return nil, err
		}
		e := findEntry(t, name)
		if e == nil {
			return nil, nil
		}
		if i == len(parts)-1 {
			return e, nil
		}
		if e.Mode != filemode.Dir {
			return nil, nil
		}
		h = e.Hash
	}
	return nil, nil
}

// findEntry binary-searches a tree's entries. Git sorts a directory "x" as
// if it were named "x/", so the name is looked up under both keys.
func findEntry(t *object.Tree, name string) *object.TreeEntry {
	n := len(t.Entries)
	for _, key := range [2]string{name, name + "/"} {
		i := sort.Search(n, func(i int) bool { return sortKey(&t.Entries[i]) >= key })
		if i < n && sortKey(&t.Entries[i]) == key {
			return &t.Entries[i]
		}
	}
	return nil
}

// sortKey is the name git sorts a tree entry by.
func sortKey(e *object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}

func (sn *Snapshot) tree(h plumbing.Hash) (*object.Tree, error) {
	if t, ok := sn.trees[h]; ok {
		return t, nil
	}
	t, err := sn.s.readTree(h)
	if err != nil {
		return nil, err
	}
	sn.trees[h] = t
	return t, nil
}

// splitPath validates a record path and returns its components.
func splitPath(path string) ([]string, error) {
	parts := strings.Split(path, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." || strings.ContainsRune(p, 0) {
			return nil, fmt.Errorf("gitstate: %q: %w", path, ErrInvalidPath)
		}
	}
	return parts, nil
}

func decodeRecord(path string, read func(string) ([]byte, error), v any) error {
	b, err := read(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("gitstate: decode %s: %w", path, err)
	}
	return nil
}

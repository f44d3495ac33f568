package gitstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
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
	trees  map[plumbing.Hash]*gitrepo.Tree
	// missing is the first read that found an object of this state gone
	// (ErrObjectMissing); a transaction over it refuses to commit.
	missing error
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
	b, err := sn.s.readBlob(e.Hash)
	return b, sn.note(err)
}

// note remembers the first error that says an object of the state is gone,
// and returns err.
func (sn *Snapshot) note(err error) error {
	if sn.missing == nil && errors.Is(err, ErrObjectMissing) {
		sn.missing = err
	}
	return err
}

// List returns the names directly under dir in byte order (which is time
// order for ids made by NewID), the order Tx.List uses too. A missing
// directory is empty.
func (sn *Snapshot) List(dir string) ([]Entry, error) {
	t, err := sn.dirTree(dir)
	if err != nil || t == nil {
		return nil, err
	}
	out := make([]Entry, len(t.Entries))
	hasDir := false
	for i, e := range t.Entries {
		out[i] = Entry{Name: e.Name, Dir: e.Mode == filemode.Dir}
		hasDir = hasDir || out[i].Dir
	}
	if hasDir {
		// git sorts a directory "a" as "a/", after "a-b" and "a.json".
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
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
			return sn.note(err)
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
	var walk func(prefix string, t *gitrepo.Tree) error
	walk = func(prefix string, t *gitrepo.Tree) error {
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

func (sn *Snapshot) dirTree(dir string) (*gitrepo.Tree, error) {
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
func (sn *Snapshot) lookup(parts []string) (*gitrepo.TreeEntry, error) {
	if sn.root.IsZero() {
		return nil, nil
	}
	h := sn.root
	for i, name := range parts {
		t, err := sn.tree(h)
		if err != nil {
			return nil, err
		}
		e := t.Find(name)
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

func (sn *Snapshot) tree(h plumbing.Hash) (*gitrepo.Tree, error) {
	if t, ok := sn.trees[h]; ok {
		return t, nil
	}
	t, err := sn.s.readTree(h)
	if err != nil {
		return nil, sn.note(err)
	}
	sn.trees[h] = t
	return t, nil
}

// splitPath validates a record path and returns its components.
func splitPath(path string) ([]string, error) {
	parts := strings.Split(path, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." || strings.ContainsRune(p, 0) || isDotGit(p) {
			return nil, fmt.Errorf("gitstate: %q: %w", path, ErrInvalidPath)
		}
	}
	return parts, nil
}

// isDotGit reports a path component that git refuses in trees because some
// filesystem would take it for ".git" (fsck's hasDotgit, which `git fsck`
// and hosts receiving a push reject): ".git" in any case, and its NTFS
// (trailing dots and spaces, "git~1", ":stream") and HFS+ (ignored code
// points) aliases. It mirrors git's is_ntfs_dotgit and is_hfs_dotgit.
func isDotGit(name string) bool {
	return isNTFSDotGit(name) || isHFSDotGit(name)
}

func isNTFSDotGit(name string) bool {
	var rest string
	switch {
	case len(name) >= 4 && name[0] == '.' && strings.EqualFold(name[1:4], "git"):
		rest = name[4:]
	case len(name) >= 5 && strings.EqualFold(name[:3], "git") && name[3:5] == "~1":
		rest = name[5:]
	default:
		return false
	}
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case '\\', ':':
			return true
		case '.', ' ':
		default:
			return false
		}
	}
	return true
}

func isHFSDotGit(name string) bool {
	const want = ".git"
	i := 0
	for _, r := range name {
		switch r {
		case 0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e,
			0x206a, 0x206b, 0x206c, 0x206d, 0x206e, 0x206f, 0xfeff:
			continue // HFS+ ignores these
		case utf8.RuneError:
			return false
		}
		if i == len(want) || r > 127 || unicode.ToLower(r) != rune(want[i]) {
			return false
		}
		i++
	}
	return i == len(want)
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

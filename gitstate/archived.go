package gitstate

import (
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// RecordArchivePrefix names the archives of old records (retention,
// docs/STATE.md): refs/codex/archive/records-<yyyy-mm-dd>-<hex>, one
// parentless commit per `git codex archive`, whose tree holds the records it
// took off the tip at their state paths. They live under ArchivePrefix, so
// sync copies them as it copies archived cycles: once, never overwritten.
const RecordArchivePrefix = ArchivePrefix + "records-"

// archivedIndex answers whether a record at a path is held by a record
// archive, here or fetched from a remote. A merge asks it
// before it keeps a record one side deleted from a directory whose records
// sync keeps: a record that side archived, unchanged since, is not lost
// (the archive holds it), so the archiving wins; a record changed since,
// or deleted any other way, stays. It reads the archive refs on first use
// only, so a merge without such a deletion reads none.
type archivedIndex struct {
	s      *Store
	loaded bool
	trees  []plumbing.Hash
	err    error
}

func (s *Store) archivedIndex() *archivedIndex { return &archivedIndex{s: s} }

// load lists the record archives: this repository's and every remote's
// (refs/codex/remotes/<remote>/archive/records-*), which a sync fetched
// before it merges.
func (a *archivedIndex) load() error {
	if a.loaded {
		return a.err
	}
	a.loaded = true
	var refs []string
	// ArchivePrefix is a directory of refs; RecordArchivePrefix only a
	// prefix of names in it
	own, err := gitrepo.ListRefs(a.s.commonDir, ArchivePrefix)
	if err != nil {
		a.err = err
		return err
	}
	for _, r := range own {
		if strings.HasPrefix(r, RecordArchivePrefix) {
			refs = append(refs, r)
		}
	}
	fetched, err := gitrepo.ListRefs(a.s.commonDir, remotesPrefix)
	if err != nil {
		a.err = err
		return err
	}
	for _, r := range fetched {
		if rest := strings.TrimPrefix(r, remotesPrefix); strings.Contains(rest, "/archive/records-") {
			refs = append(refs, r)
		}
	}
	seen := map[plumbing.Hash]bool{}
	for _, r := range refs {
		h, ok, err := gitrepo.ReadRef(a.s.commonDir, r)
		if err != nil || !ok {
			continue // a ref that vanished meanwhile holds nothing we need
		}
		c, err := a.s.readCommit(h)
		if err != nil || seen[c.TreeHash] {
			continue
		}
		seen[c.TreeHash] = true
		a.trees = append(a.trees, c.TreeHash)
	}
	return nil
}

// has reports whether some record archive holds a record at path. Any
// version will do: the side that archived it may have changed it first
// (a mail read, then archived), and the archive holds that side's last
// version; the callers check that the other side changed nothing since.
func (a *archivedIndex) has(path string) (bool, error) {
	if a == nil {
		return false, nil
	}
	if err := a.load(); err != nil {
		return false, err
	}
	parts := strings.Split(path, "/")
	for _, t := range a.trees {
		got, err := a.lookup(t, parts)
		if err != nil {
			return false, err
		}
		if !got.IsZero() {
			return true, nil
		}
	}
	return false, nil
}

// lookup finds the blob at parts below the tree t (zero: none).
func (a *archivedIndex) lookup(t plumbing.Hash, parts []string) (plumbing.Hash, error) {
	for i, name := range parts {
		tree, err := a.s.readTree(t)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		var next *gitrepo.TreeEntry
		for j := range tree.Entries {
			if tree.Entries[j].Name == name {
				next = &tree.Entries[j]
				break
			}
		}
		if next == nil || (next.Mode == filemode.Dir) != (i < len(parts)-1) {
			return plumbing.ZeroHash, nil
		}
		t = next.Hash
	}
	return t, nil
}

// allArchived reports whether every record below the tree t (at path) is
// held by a record archive: a directory one side removed whole.
func (a *archivedIndex) allArchived(path string, t plumbing.Hash) (bool, error) {
	tree, err := a.s.readTree(t)
	if err != nil {
		return false, err
	}
	for _, e := range tree.Entries {
		child := path + "/" + e.Name
		var ok bool
		if e.Mode == filemode.Dir {
			ok, err = a.allArchived(child, e.Hash)
		} else {
			ok, err = a.has(child)
		}
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// archivedAway reports whether a kept record that one side deleted (o or t
// absent) was archived by that side: the other side still has the base's
// version, unchanged, and a record archive holds the record. Then
// the deletion stands, as in any three-way merge; otherwise the record
// stays (mergeKept).
func (m *merger) archivedAway(path string, b, o, t node) (bool, error) {
	present := o
	if o.absent() {
		present = t
	}
	if b.absent() || b.dir || present != b {
		return false, nil
	}
	return m.archived.has(path)
}

// archivedDrop reports whether the entry e at parts, which the other side
// no longer has, went into a record archive whole (a record, or a
// directory of them).
func archivedDrop(a *archivedIndex, parts []string, e gitrepo.TreeEntry) (bool, error) {
	path := strings.Join(parts, "/")
	if e.Mode == filemode.Dir {
		return a.allArchived(path, e.Hash)
	}
	return a.has(path)
}

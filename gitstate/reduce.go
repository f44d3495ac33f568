package gitstate

import (
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// Reduction is what a reader makes of every record under a directory,
// built by parts: Leaf of each record, Join of each directory's parts (in
// path order, the order Walk visits). A directory's tree id names its
// whole content, so its part, once made, holds for as long as the process
// keeps it: the store remembers each directory's part by Name, path and
// tree id (a part may name the paths below it), and a later Reduce reads
// only the directories that changed. At
// retention's default a month's state holds ~63k records (issue 27):
// reading them all at every poll of the web page or of an inbox took
// tens to hundreds of milliseconds, though a poll finds a few changed.
//
// The parts are shared between calls and goroutines: Join must not change
// the parts it is given, nor a caller the value Reduce returns. Name must
// say everything Leaf and Join depend on (two reductions under one Name
// would be given each other's parts).
type Reduction struct {
	Name string
	Leaf func(path string, data []byte) (any, error)
	Join func(parts []any) any
	// Names says Leaf needs a record's path alone: it is given nil for
	// data, and the record's blob is not read. A count of records reads
	// only trees: of a fresh clone's first page at a month (issue 27),
	// the ~6.4k blobs of tasks and decisions it read only to count them
	// were about half of its time.
	Names bool
	// Keep, if set, keeps parts for the next process too (KeepParts).
	Keep *KeepParts
}

// KeepParts keeps the parts of the directory reduced and of its
// subdirectories in a file of this machine's, .git/codex/reduced/<Name>.json,
// replaced after each Reduce that made one of them afresh: a command run
// as a process (`git codex status`, every few minutes by every agent) then
// reads only the subdirectories that changed since the last one. (One
// level: a subdirectory remembered whole is kept whole, so the file
// always holds every part of the state last reduced.) The file is named by
// tree ids, so it is never stale, only incomplete; one that cannot be read
// or written is done without. Encode and Decode turn a part into bytes
// and back.
type KeepParts struct {
	Encode func(part any) ([]byte, error)
	Decode func(data []byte) (any, error)
	// Depth, when over 1, keeps that many levels of subdirectories (a
	// state's mail is four levels deep: its leaf directories hold ~3
	// records each, so a day's mail changes every directory above them)
	// in another file, <Name>.parts (deepSet): for each directory, the
	// part of the tree last reduced there.
	Depth int
	// Every, with Depth, bounds how often a process rewrites that file:
	// at its first Reduce that made a part, then at most once in Every
	// (a long-lived process reduces at every poll; the file is rewritten
	// whole). Zero: after every Reduce that made a part.
	Every time.Duration
	// ReadOnly, with Depth, uses the parts kept but records none of this
	// state's among the tip's: for a past state the page shows, whose parts
	// would replace the tip's that the next process reads first. What it
	// made afresh goes to the past states' set instead, <Name>.past.parts
	// (pastSet), which a ReadOnly Reduce uses beside the tip's.
	ReadOnly bool
}

// Reduce applies r to the records under dir: Join(nil) when there are
// none.
func (sn *Snapshot) Reduce(dir string, r Reduction) (any, error) {
	dir = strings.Trim(dir, "/")
	t, err := sn.dirTree(dir)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return r.Join(nil), nil
	}
	h := sn.root
	if dir != "" {
		parts, _ := splitPath(dir) // dirTree checked it
		e, err := sn.lookup(parts)
		if err != nil {
			return nil, err
		}
		h = e.Hash
	}
	if r.Keep == nil {
		return sn.reduceTree(dir, h, t, r, 0, nil)
	}
	if r.Keep.Depth > 1 {
		return sn.reduceKeptDeep(dir, h, t, r)
	}
	sn.s.loadKept(r)
	k := &keptRun{parts: map[string]keptPart{}, depth: 1}
	v, err := sn.reduceTree(dir, h, t, r, 0, k)
	if err == nil && k.fresh {
		sn.s.writeKept(r, k.parts)
	}
	return v, err
}

// keptRun gathers, in one Reduce, the parts KeepParts keeps.
type keptRun struct {
	parts map[string]keptPart // by directory
	fresh bool                // one of them was made, not remembered
	depth int                 // the levels below the directory reduced that are kept
	set   *deepSet            // the parts kept deep (KeepParts.Depth), or nil
	past  *deepSet            // with set, for a past state: the past states' (pastSet)
}

// reduceTree reduces dir, tree h; t is that tree, or nil to read it only
// when its part is not remembered (the parts of a directory that changed
// are mostly of subdirectories that did not: a day's mail changes every
// directory of 32 leaves above it, and ~2.8k of the ~21.5k leaves).
func (sn *Snapshot) reduceTree(dir string, h plumbing.Hash, t *gitrepo.Tree, r Reduction, depth int, k *keptRun) (any, error) {
	kept := k != nil && depth <= k.depth
	v, ok := sn.s.reduced.get(r.Name, dir, h)
	switch {
	case ok || k == nil:
	case k.set != nil: // kept deep (KeepParts.Depth)
		v, ok = sn.s.reduced.keptDeep(r, k.set, dir, h)
		if !ok && k.past != nil {
			v, ok = sn.s.reduced.keptDeep(r, k.past, dir, h)
		}
	case kept: // kept a level deep, decoded only when reached
		v, ok = sn.s.keptPart(r, dir, h)
	}
	if ok {
		// a past state's set records only what was made afresh: what it
		// found is kept already, in its set or the tip's
		if kept && k.past == nil {
			k.parts[dir] = keptPart{tree: h, part: v}
		}
		return v, nil
	}
	if t == nil {
		var err error
		if t, err = sn.tree(h); err != nil {
			return nil, err
		}
	}
	parts := make([]any, 0, len(t.Entries))
	var recs *keptRecords // a deep keep's records (KeepParts.Depth)
	if kept && k.set != nil {
		recs = sn.s.reduced.keptRecordsOf(dir, k.set, k.past)
	}
	for _, e := range t.Entries {
		p := e.Name
		if dir != "" {
			p = dir + "/" + e.Name
		}
		if e.Mode != filemode.Dir {
			if v, ok := recs.find(r, e.Name, e.Hash); ok {
				parts = append(parts, v)
				continue
			}
			var b []byte
			if !r.Names {
				var err error
				if b, err = sn.s.readBlob(e.Hash); err != nil {
					return nil, sn.note(err)
				}
			}
			v, err := r.Leaf(p, b)
			if err != nil {
				return nil, err
			}
			recs.add(e.Name, e.Hash, v)
			parts = append(parts, v)
			continue
		}
		// its tree is read only if its part is not remembered
		recs.addDir(e.Name, e.Hash)
		v, err := sn.reduceTree(p, e.Hash, nil, r, depth+1, k)
		if err != nil {
			return nil, err
		}
		parts = append(parts, v)
	}
	v = r.Join(parts)
	sn.s.reduced.put(r.Name, dir, h, v)
	if kept {
		k.parts[dir], k.fresh = keptPart{tree: h, part: v, records: recs.made()}, true
	}
	return v, nil
}

// Reduce is Snapshot.Reduce on what the transaction sees: the tip's parts
// where it wrote nothing under dir, its own writes read whole otherwise.
// It keeps no file (KeepParts): a transaction may hold the writer lock,
// and other writers must not wait behind a file written for a cache.
func (tx *Tx) Reduce(dir string, r Reduction) (any, error) {
	r.Keep = nil
	prefix := strings.Trim(dir, "/") + "/"
	for p := range tx.pending {
		if prefix == "/" || strings.HasPrefix(p, prefix) {
			return tx.reduceWhole(dir, r)
		}
	}
	return tx.base.Reduce(dir, r)
}

// reduceWhole joins every record under dir at once (no directory's part
// is remembered: they are not the tip's).
func (tx *Tx) reduceWhole(dir string, r Reduction) (any, error) {
	var parts []any
	err := tx.Walk(dir, func(p string, data []byte) error {
		if r.Names {
			data = nil // as Snapshot.Reduce gives it
		}
		v, err := r.Leaf(p, data)
		parts = append(parts, v)
		return err
	})
	if err != nil {
		return nil, err
	}
	return r.Join(parts), nil
}

// keptPart is a directory's part and the tree it was made of.
type keptPart struct {
	tree plumbing.Hash
	part any
	// records are the tree's entries with its records' parts, when kept
	// deep (keptRecords): []keptRecord, keptBytes, or nil
	records any
}

// reduceMemo is the directories' parts a Store remembers: for each
// reduction and directory, the parts of the last two trees read there
// (the tip's and, say, a past state's the page shows), so what it holds
// is bounded by the directories, not by the changes a long-lived process
// sees (an MCP server polls ~100k times a month). Bounded by count too:
// when full it starts again, as the object cache does.
type reduceMemo struct {
	mu    sync.Mutex
	slots map[slotKey]*memoSlot
	// loaded are the reductions whose kept parts were read (KeepParts),
	// raw those parts not yet decoded
	loaded map[string]bool
	raw    map[slotKey]rawPart
	// deep are the reductions' parts KeepParts.Depth keeps, by name
	// (and the past states' set apart)
	deep map[deepKey]*deepSet
	// writes are the past states' files being written aside
	// (reduceKeptDeep); Store.Close waits for them
	writes sync.WaitGroup
}

type slotKey struct {
	name, dir string
}

// memoSlot holds a directory's last two parts; next is the one replaced
// next.
type memoSlot struct {
	parts [2]keptPart
	next  int
}

// maxReduced bounds the directories remembered: a month's state at the
// retention default has ~21.5k directories.
const maxReduced = 1 << 17

func (m *reduceMemo) get(name, dir string, h plumbing.Hash) (any, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if sl := m.slots[slotKey{name, dir}]; sl != nil {
		for _, p := range sl.parts {
			if p.tree == h { // an empty slot's is the zero id, no tree's
				return p.part, true
			}
		}
	}
	return nil, false
}

func (m *reduceMemo) put(name, dir string, h plumbing.Hash, v any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.putLocked(name, dir, h, v)
}

func (m *reduceMemo) putLocked(name, dir string, h plumbing.Hash, v any) {
	if m.slots == nil || len(m.slots) >= maxReduced {
		m.slots = map[slotKey]*memoSlot{}
	}
	k := slotKey{name, dir}
	sl := m.slots[k]
	if sl == nil {
		sl = &memoSlot{}
		m.slots[k] = sl
	}
	for _, p := range sl.parts {
		if p.tree == h { // an empty slot's is the zero id, no tree's
			return
		}
	}
	sl.parts[sl.next] = keptPart{tree: h, part: v}
	sl.next = 1 - sl.next
}

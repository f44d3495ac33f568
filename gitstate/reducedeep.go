package gitstate

import (
	"os"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// deepSet is what a process keeps of a reduction whose parts are kept
// deep (KeepParts.Depth): for each directory, the part of the tree last
// reduced there, with that tree's entries and its records' parts
// (keptRecords) when the directory was read afresh. A directory whose
// tree did not change since is not visited by a Reduce, nor are the
// directories below it, whose parts stay as they were: those of its tree.
// So the set, and the file made of it, holds every part of the state last
// reduced, however little a Reduce read. (A part of a tree the directory
// no longer has is kept till the directory is reduced again: it is named
// by its tree, so it is never wrong, only of no use.)
//
// pastSet: a past state (KeepParts.ReadOnly, the page's ?at=) has a set
// of its own, <Name>.past.parts, beside the tip's: the parts it made
// afresh, each directory's of the last past tree read there. A week
// back, a month's mail differs from the tip in ~10k of its ~20k
// directories, and reading their trees was most of the ~400 ms of CPU a
// fresh server's ?at= took (issue 27); the next server (or a later
// ?at= near that state) finds them here by tree id. The tip's set is left
// as it was, so the next server's first page still finds the tip's
// parts first. A directory holds one past part, of the last state read
// afresh there: a person going through several states keeps the last's.
type deepSet struct {
	past    bool // the past states' set (KeepParts.ReadOnly), not the tip's
	load    sync.Once
	parts   map[string]keptPart // by directory; under reduceMemo.mu
	dirty   bool                // parts changed since the file was written
	written time.Time           // when this process last wrote it; zero: never
}

// reduceKeptDeep is Reduce with KeepParts.Depth over 1. A past state
// (KeepParts.ReadOnly) uses the tip's set and the past states' set, and
// records what it made in the latter (pastSet).
func (sn *Snapshot) reduceKeptDeep(dir string, h plumbing.Hash, t *gitrepo.Tree, r Reduction) (any, error) {
	set := sn.s.loadDeep(r, false)
	// a directory read afresh may be most of a month's (a first server, a
	// past state): its ~80k lookups, scattered over the indexes, would
	// miss the 512 blocks a long-lived process keeps at every step
	defer sn.s.widenIndexCache(syncIndexBlocks)()
	k := &keptRun{parts: map[string]keptPart{}, depth: r.Keep.Depth, set: set}
	into := set
	if r.Keep.ReadOnly {
		k.past = sn.s.loadDeep(r, true)
		into = k.past
	}
	v, err := sn.reduceTree(dir, h, t, r, 0, k)
	if err != nil {
		return v, err
	}
	parts := sn.s.reduced.mergeDeep(into, k.parts, r.Keep.Every, time.Now())
	if parts == nil {
		return v, nil
	}
	write := func() {
		// outside the memory's lock: other reads go on meanwhile
		if data, err := encodeDeep(r, into.past, parts); err == nil {
			sn.s.replaceKept(sn.s.deepFile(r, into.past), data)
		}
	}
	if !into.past {
		write()
		return v, nil
	}
	// a past state's file is written beside the answer, not before it:
	// its ~10k parts made afresh (a month's mail a week back) took ~40 ms
	// to encode, a tenth of the ?at= that made them; the parts are not
	// changed once made, and the map is this write's own
	m := &sn.s.reduced
	m.writes.Add(1)
	go func() {
		defer m.writes.Done()
		write()
	}()
	return v, nil
}

// mergeDeep records a Reduce's kept parts in set; it returns what the
// file should hold when it is due to be rewritten (nil otherwise).
func (m *reduceMemo) mergeDeep(set *deepSet, parts map[string]keptPart, every time.Duration, now time.Time) map[string]keptPart {
	m.mu.Lock()
	defer m.mu.Unlock()
	for dir, p := range parts {
		if old, ok := set.parts[dir]; !ok || old.tree != p.tree {
			set.parts[dir], set.dirty = p, true
		}
	}
	if !set.dirty || !set.written.IsZero() && now.Sub(set.written) < every {
		return nil
	}
	set.dirty, set.written = false, now
	out := make(map[string]keptPart, len(set.parts))
	for dir, p := range set.parts {
		out[dir] = p
	}
	return out
}

// deepFile is where r's deep parts are kept (past: the past states'
// set's, pastSet), "" when its name cannot name a file.
func (s *Store) deepFile(r Reduction, past bool) string {
	if past {
		return s.keptPath(r.Name, ".past.parts")
	}
	return s.keptPath(r.Name, ".parts")
}

// deepKey names a deep set in a store's memory.
type deepKey struct {
	name string
	past bool
}

// loadDeep is r's deep set (past: the past states', pastSet), read from
// its file once per process (its parts stay bytes until a Reduce uses
// them: keptDeep).
func (s *Store) loadDeep(r Reduction, past bool) *deepSet {
	m := &s.reduced
	m.mu.Lock()
	set := m.deep[deepKey{r.Name, past}]
	if set == nil {
		if m.deep == nil {
			m.deep = map[deepKey]*deepSet{}
		}
		set = &deepSet{parts: map[string]keptPart{}, past: past}
		m.deep[deepKey{r.Name, past}] = set
	}
	m.mu.Unlock()
	set.load.Do(func() {
		file := s.deepFile(r, past)
		if file == "" {
			return
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return
		}
		parts, err := decodeDeep(r, past, data)
		if err != nil {
			return // not one this version wrote, or damaged: read afresh, and replaced
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		for dir, p := range parts {
			if _, ok := set.parts[dir]; !ok {
				set.parts[dir] = p
			}
		}
	})
	return set
}

// deepSetOf is r's deep set if this process loaded it, else nil.
func (m *reduceMemo) deepSetOf(r Reduction, past bool) *deepSet {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.deep[deepKey{r.Name, past}]
}

// keptBytes is a part as the deep file holds it, not decoded yet: a
// server that starts reads ~22k parts of a month's mail and, when the
// state did not change much since, uses a few of them (a part whose
// directory did not change stands for all below it). Reduce decodes one
// when it uses it (keptDeep); written again, its bytes are copied.
type keptBytes []byte

// keptDeep is the part of directory dir, tree h, that set holds, decoded
// (and remembered as Reduce's other parts are); ok is false when it holds
// none, or bytes Decode refuses, which Reduce then makes afresh.
func (m *reduceMemo) keptDeep(r Reduction, set *deepSet, dir string, h plumbing.Hash) (any, bool) {
	m.mu.Lock()
	p, ok := set.parts[dir]
	m.mu.Unlock()
	if !ok || p.tree != h {
		return nil, false
	}
	v := p.part
	if b, raw := v.(keptBytes); raw {
		var err error
		if v, err = r.Keep.Decode(b); err != nil {
			return nil, false
		}
	}
	m.put(r.Name, dir, h, v)
	return v, true
}

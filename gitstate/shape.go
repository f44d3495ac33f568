package gitstate

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Layout says what a state tree may hold beyond git's own rules: the
// directories of the record kinds this version knows, with their depth,
// fan-out and whether their records may ever be deleted, and bounds on
// everything else. Sync checks every tree it would bring in against it
// before anything is adopted (checkShape), and a merge keeps the records of
// Keep directories whatever one side did to them.
type Layout struct {
	// Dirs are the known kinds' directories.
	Dirs []DirLayout
	// MaxRecord bounds the size of a record in a known directory (0:
	// DefaultMaxRecord); MaxOther the size of a file anywhere else (0:
	// DefaultMaxOther), where a newer version may keep kinds this one does
	// not know.
	MaxRecord, MaxOther int64
	// Archivable tells the versions of records `archive` takes off the
	// tip (retention: kinds it takes, records that ended) from those it
	// never does. A merge lets a side's deletion of a Keep record stand
	// only if a record archive holds a version that passes (and the
	// archive passes the store's own checks, archivedIndex). nil: the
	// store's checks only, which know the kinds' directories (Retention)
	// but cannot tell an unread mail from a read one.
	Archivable ArchiveRule
}

// DirLayout is the layout of one record kind's directory.
type DirLayout struct {
	// Dir is the directory, e.g. "mail" or "reviews/active".
	Dir string
	// Depth is the number of names from Dir down to a record's file:
	// mail/<recipient>/<x>/<y>/<id>.json is 4, agents/<id>.json is 1.
	// Every record of the kind is a ".json" file at exactly that depth.
	Depth int
	// Fanout is how many of the levels just above the file are fan-out
	// buckets, named by one character of an id (Fanout(id)).
	Fanout int
	// Keep marks records no tool deletes: a sync never drops them, even
	// when the other side's history did (mergeKept).
	Keep bool
	// Retention is the name `git codex archive` takes this directory's
	// records under, as a record archive's manifest counts them ("":
	// never archived). The layout is the one table of what a record
	// archive may hold (archivedIndex.check): the record kinds set it, so
	// the store keeps no list of its own.
	Retention string
}

// Size bounds of a state tree (Layout's defaults). A record holds at most
// one call's arguments (tools cap them at 1 MiB) plus what the tools add;
// a conflict record holds a lost record whole.
const (
	DefaultMaxRecord = 4 << 20
	DefaultMaxOther  = 1 << 20
	// maxOtherDepth bounds the depth of paths outside the known
	// directories: deep enough for any layout of git codex's, shallow
	// enough that walking a hostile tree ends.
	maxOtherDepth = 8
	// maxNote bounds one note's size.
	maxNote = 1 << 20
)

// hashSize is the length of a SHA-1 object id in bytes, as tree entries
// store it.
const hashSize = len(plumbing.ZeroHash)

// slot is what may stand at a path of a tree being checked.
type slot struct {
	tree, blob bool  // whether a directory, a file may stand there
	max        int64 // a file's largest size
	why        string
}

// slotAt says what the layout allows at path (its names from the root).
func (l *Layout) slotAt(parts []string) slot {
	maxRecord, maxOther := l.MaxRecord, l.MaxOther
	if maxRecord <= 0 {
		maxRecord = DefaultMaxRecord
	}
	if maxOther <= 0 {
		maxOther = DefaultMaxOther
	}
	for _, d := range l.Dirs {
		dir := strings.Split(d.Dir, "/")
		n := min(len(parts), len(dir))
		if !equalNames(parts[:n], dir[:n]) {
			continue
		}
		if len(parts) <= len(dir) {
			return slot{tree: true, why: "a directory of records"}
		}
		level, name := len(parts)-len(dir), parts[len(parts)-1]
		switch {
		case level > d.Depth:
			return slot{why: fmt.Sprintf("below the depth of %s/ records", d.Dir)}
		case level == d.Depth:
			if !strings.HasSuffix(name, ".json") || name == ".json" {
				return slot{why: fmt.Sprintf("not the name of a %s/ record (<id>.json)", d.Dir)}
			}
			return slot{blob: true, max: maxRecord, why: "a record"}
		case level > d.Depth-1-d.Fanout:
			if len(name) != 1 || !strings.Contains(idAlphabet+"_", name) {
				return slot{why: "not a fan-out directory (one character of an id)"}
			}
		}
		return slot{tree: true, why: "a directory of records"}
	}
	if len(parts) > maxOtherDepth {
		return slot{why: fmt.Sprintf("deeper than %d levels", maxOtherDepth)}
	}
	return slot{tree: true, blob: true, max: maxOther}
}

func equalNames(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// keeps reports whether path (names from the root) is, or leads to, a
// directory whose records a merge must keep.
func (l *Layout) keeps(parts []string) bool {
	if l == nil {
		return false
	}
	for _, d := range l.Dirs {
		if !d.Keep {
			continue
		}
		dir := strings.Split(d.Dir, "/")
		n := min(len(parts), len(dir))
		if equalNames(parts[:n], dir[:n]) {
			return true
		}
	}
	return false
}

// notesSlot says what may stand in a notes tree: notes named by the hex
// hash of the object they annotate, possibly fanned out in directories of
// two hex digits (git notes' own layout), and nothing else.
func notesSlot(parts []string) slot {
	n := 0
	for _, p := range parts {
		if !isHex(p) {
			return slot{why: "not a note (named by an object's hash)"}
		}
		n += len(p)
	}
	last := parts[len(parts)-1]
	switch {
	case n == 2*hashSize:
		return slot{blob: true, max: maxNote}
	case n < 2*hashSize && len(last) == 2:
		return slot{tree: true}
	}
	return slot{why: "not a note (named by an object's hash)"}
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune("0123456789abcdef", rune(s[i])) {
			return false
		}
	}
	return s != ""
}

// shapeError is a tree that breaks git's rules or the layout, at path.
func shapeError(path, format string, args ...any) error {
	if path == "" {
		path = "the root tree"
	}
	return fmt.Errorf("gitstate: %w: %q: %s", ErrInvalidState, path, fmt.Sprintf(format, args...))
}

// rawEntry is one entry of a tree object as written, before any decoding
// that would hide what git's fsck checks: the mode's exact digits, names
// repeated or out of order.
type rawEntry struct {
	mode, name string
	hash       plumbing.Hash
}

// parseTree splits a tree object's content into its entries.
func parseTree(data []byte) ([]rawEntry, error) {
	var out []rawEntry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp < 0 || nul < sp || len(data) < nul+1+hashSize {
			return nil, fmt.Errorf("truncated tree entry")
		}
		var h plumbing.Hash
		copy(h[:], data[nul+1:])
		out = append(out, rawEntry{mode: string(data[:sp]), name: string(data[sp+1 : nul]), hash: h})
		data = data[nul+1+hashSize:]
	}
	return out, nil
}

// checkEntries applies git's own rules for one tree (those `git fsck`
// enforces and a checkout relies on): legal names, the two modes git codex
// writes (a file, a directory) spelt as git spells them, names sorted in
// git's order and each listed once.
func checkEntries(path string, entries []rawEntry) error {
	seen := map[string]bool{}
	prev := ""
	for i, e := range entries {
		p := joinPath(path, e.name)
		if err := checkName(e.name); err != nil {
			return shapeError(p, "%v", err)
		}
		switch e.mode {
		case "100644", "40000":
		default:
			return shapeError(p, "mode %s (git codex writes only files, 100644, and directories, 40000)", e.mode)
		}
		if seen[e.name] {
			return shapeError(p, "listed twice in one tree")
		}
		seen[e.name] = true
		key := e.name
		if e.mode == "40000" {
			key += "/"
		}
		if i > 0 && key <= prev {
			return shapeError(p, "tree entries out of git's order")
		}
		prev = key
	}
	return nil
}

// checkName refuses names git refuses in a tree, and control characters.
func checkName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty name")
	case name == "." || name == "..":
		return fmt.Errorf("name %q", name)
	case strings.EqualFold(name, ".git"):
		return fmt.Errorf("name .git")
	case strings.Contains(name, "/"):
		return fmt.Errorf("name with a slash")
	}
	for i := 0; i < len(name); i++ {
		if name[i] < 0x20 || name[i] == 0x7f {
			return fmt.Errorf("control character in a name")
		}
	}
	return nil
}

func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// checkShape checks the tree to, which would replace the tree from (zero:
// nothing yet), against git's rules and what slotAt allows, descending only
// into subtrees whose hashes differ: the cost follows the change, not the
// state. It fails wrapping ErrInvalidState, naming the first bad path.
func (s *Store) checkShape(from, to plumbing.Hash, slotAt func(parts []string) slot) error {
	return checkShapeIn(s, from, to, slotAt)
}

// checkShapeIn is checkShape reading through r (a merge's check of a big
// incoming change reads on a reader of its own: checkTreesAside).
func checkShapeIn(r objReader, from, to plumbing.Hash, slotAt func(parts []string) slot) error {
	var walk func(path string, parts []string, from, to plumbing.Hash) error
	walk = func(path string, parts []string, from, to plumbing.Hash) error {
		data, err := r.readRaw(plumbing.TreeObject, to)
		if err != nil {
			return shapeError(path, "not a readable tree: %v", err)
		}
		entries, err := parseTree(data)
		if err != nil {
			return shapeError(path, "%v", err)
		}
		if err := checkEntries(path, entries); err != nil {
			return err
		}
		if len(entries) == 0 && path != "" {
			return shapeError(path, "empty directory (git codex never writes one)")
		}
		old := map[string]rawEntry{}
		if !from.IsZero() {
			t, err := r.readTree(from)
			if err != nil {
				return err
			}
			for _, e := range t.Entries {
				mode := "100644"
				if e.Mode == filemode.Dir {
					mode = "40000"
				}
				old[e.Name] = rawEntry{mode: mode, name: e.Name, hash: e.Hash}
			}
		}
		for _, e := range entries {
			prev, had := old[e.name]
			if had && prev == e {
				continue
			}
			p, ps := joinPath(path, e.name), append(parts[:len(parts):len(parts)], e.name)
			sl := slotAt(ps)
			isDir := e.mode == "40000"
			switch {
			case isDir && !sl.tree, !isDir && !sl.blob:
				what := "a file"
				if isDir {
					what = "a directory"
				}
				if sl.why == "" {
					sl.why = "something else"
				}
				return shapeError(p, "%s where the layout has %s", what, sl.why)
			case isDir:
				var sub plumbing.Hash
				if had && prev.mode == "40000" {
					sub = prev.hash
				}
				if err := walk(p, ps, sub, e.hash); err != nil {
					return err
				}
			default:
				typ, size, err := r.statObject(e.hash)
				if err != nil {
					return shapeError(p, "unreadable: %v", err)
				}
				if size > sl.max {
					return shapeError(p, "%d bytes, more than the %d a file there may have", size, sl.max)
				}
				if typ != plumbing.BlobObject {
					return shapeError(p, "not a readable file: %s is a %s", e.hash, typ)
				}
			}
		}
		return nil
	}
	return walk("", nil, from, to)
}

package gitstate

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// Tx is one transaction: reads see the state at the tip plus the
// transaction's own writes, and all writes become one commit. Handlers never
// see hashes; they Get and Put JSON at paths.
//
// A Tx is used by one goroutine, inside the function given to Update.
type Tx struct {
	base    *Snapshot
	pending map[string][]byte // path -> new content; nil means delete
	meta    *Meta
	clock   Clock
	now     time.Time
	onAbort []func(context.Context) error
	undo    []func(context.Context) error // abort hooks due to run once the writer lock is released
	merged  []plumbing.Hash               // second parents: set when the commit merges a history
	side    []sideRef                     // commits at other refs (CommitAt)
	// trailers go on the commit after those of its metadata: what the
	// store itself did for the call (RestoreArchived's source)
	trailers []Trailer
}

// Clock is the Lamport time of the commit this transaction will write. Every
// mutable record the transaction changes stores it.
func (tx *Tx) Clock() Clock { return tx.clock }

// Now is the transaction's wall-clock time (UTC, millisecond precision).
func (tx *Tx) Now() time.Time { return tx.now }

// Parent is the commit the transaction builds on ("" when initialising).
func (tx *Tx) Parent() string { return tx.base.Commit() }

// NewID returns a fresh id with the given prefix (see NewID).
func (tx *Tx) NewID(prefix string) string { return NewID(prefix, tx.now) }

// SetMeta sets the commit's summary and trailers. A transaction must set
// them before it ends, whether its operation succeeded or not.
func (tx *Tx) SetMeta(m Meta) { tx.meta = &m }

// OnAbort registers fn to undo something made outside git (a worktree, a
// tmux session) for this transaction, if its writes never reach a commit:
// when Discard is called, or when the function given to Update fails, or
// the commit or ref update does. Hooks run in reverse order after the
// writer lock is released (other writers never wait behind an undo), with
// the context Update was given; their errors are reported in
// Commit.UndoErrors when the transaction still committed (a refusal's audit
// record), or joined to Update's error. (A merge's finisher should do
// nothing outside git; if it registers hooks anyway, they run at once when
// it fails.)
func (tx *Tx) OnAbort(fn func(ctx context.Context) error) { tx.onAbort = append(tx.onAbort, fn) }

// Discard drops every write made so far and runs the abort hooks. The
// transaction still commits (with its metadata) if the Update function
// returns nil: that is how refusals and failures reach the audit trail while
// changing nothing else.
func (tx *Tx) Discard() {
	clear(tx.pending)
	tx.side = nil
	tx.trailers = nil
	tx.abort()
}

// abort schedules the abort hooks registered so far; runUndo runs them.
func (tx *Tx) abort() {
	for i := len(tx.onAbort) - 1; i >= 0; i-- {
		tx.undo = append(tx.undo, tx.onAbort[i])
	}
	tx.onAbort = nil
}

// runUndo runs the scheduled abort hooks, in reverse order of
// registration, and returns their errors.
func (tx *Tx) runUndo(ctx context.Context) []error {
	var errs []error
	for _, fn := range tx.undo {
		if err := fn(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	tx.undo = nil
	return errs
}

// Put stores v as an indented JSON record at path.
func (tx *Tx) Put(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("gitstate: encode %s: %w", path, err)
	}
	return tx.PutRaw(path, append(b, '\n'))
}

// PutRaw stores data as the record at path.
func (tx *Tx) PutRaw(path string, data []byte) error {
	if _, err := splitPath(path); err != nil {
		return err
	}
	if data == nil {
		data = []byte{}
	}
	tx.pending[path] = data
	return nil
}

// Delete removes the record at path; deleting a missing record is not an
// error. Directories left empty disappear from the tree. A directory's name
// is not a record: deleting it changes nothing.
func (tx *Tx) Delete(path string) error {
	if _, err := splitPath(path); err != nil {
		return err
	}
	tx.pending[path] = nil
	return nil
}

// Get decodes the record at path, as the transaction has left it.
func (tx *Tx) Get(path string, v any) error {
	return decodeRecord(path, tx.Read, v)
}

// Read returns the raw record at path, as the transaction has left it.
func (tx *Tx) Read(path string) ([]byte, error) {
	if b, ok := tx.pending[path]; ok {
		if b == nil {
			return nil, fmt.Errorf("gitstate: %s: %w", path, ErrNotFound)
		}
		return b, nil
	}
	return tx.base.Read(path)
}

// List returns the names directly under dir, including the transaction's
// own writes.
func (tx *Tx) List(dir string) ([]Entry, error) {
	entries, err := tx.base.List(dir)
	if err != nil || len(tx.pending) == 0 {
		return entries, err
	}
	prefix := strings.Trim(dir, "/")
	if prefix != "" {
		prefix += "/"
	}
	names := map[string]bool{} // name -> is a directory
	for _, e := range entries {
		names[e.Name] = e.Dir
	}
	records := map[string][]byte{} // writes of records directly under dir
	type under struct{ put, del bool }
	subs := map[string]under{} // writes below a name
	for p, b := range tx.pending {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		name, _, isDir := strings.Cut(rest, "/")
		if !isDir {
			records[name] = b
			continue
		}
		u := subs[name]
		if b != nil {
			u.put = true
		} else {
			u.del = true
		}
		subs[name] = u
	}
	// a touched name is a directory while records remain under it, else a
	// record if one is there (the commit refuses names that are both).
	settle := func(name string) {
		isDir, inBase := names[name]
		u := subs[name]
		dirAlive := u.put || (inBase && isDir && !u.del)
		if !dirAlive && inBase && isDir && u.del {
			rec, err := tx.walkPaths(prefix + name)
			dirAlive = err == nil && len(rec) > 0
		}
		recAlive := inBase && !isDir
		if b, ok := records[name]; ok {
			recAlive = b != nil
		}
		switch {
		case dirAlive:
			names[name] = true
		case recAlive:
			names[name] = false
		default:
			delete(names, name)
		}
	}
	for name := range records {
		settle(name)
	}
	for name := range subs {
		if _, done := records[name]; !done {
			settle(name)
		}
	}
	out := make([]Entry, 0, len(names))
	for n, d := range names {
		out = append(out, Entry{Name: n, Dir: d})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Walk calls fn for every record under dir, including the transaction's own
// writes, in path order.
func (tx *Tx) Walk(dir string, fn func(path string, data []byte) error) error {
	paths, err := tx.walkPaths(dir)
	if err != nil {
		return err
	}
	for _, p := range paths {
		b, err := tx.Read(p)
		if err != nil {
			return err
		}
		if err := fn(p, b); err != nil {
			return err
		}
	}
	return nil
}

func (tx *Tx) walkPaths(dir string) ([]string, error) {
	base, err := tx.base.walkPaths(dir)
	if err != nil {
		return nil, err
	}
	prefix := strings.Trim(dir, "/")
	if prefix != "" {
		prefix += "/"
	}
	seen := make(map[string]bool, len(base))
	var out []string
	for _, p := range base {
		seen[p.path] = true
		if b, ok := tx.pending[p.path]; ok && b == nil {
			continue
		}
		out = append(out, p.path)
	}
	for p, b := range tx.pending {
		if b != nil && !seen[p] && strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Meta returns the commit's summary and trailers as set so far, and
// whether they were set.
func (tx *Tx) Meta() (Meta, bool) {
	if tx.meta == nil {
		return Meta{}, false
	}
	return *tx.meta, true
}

// RewriteWrites calls fn for every record the transaction is about to
// commit, in path order: its writes at RefState (deletions aside), then the
// files of the commits CommitAt staged (ref names which). What fn returns
// is written in its place. It is where a caller sees, and may change,
// every byte before it reaches a ref; fn's error stops it and is returned.
func (tx *Tx) RewriteWrites(fn func(ref, path string, data []byte) ([]byte, error)) error {
	paths := make([]string, 0, len(tx.pending))
	for p, b := range tx.pending {
		if b != nil {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		b, err := fn(RefState, p, tx.pending[p])
		if err != nil {
			return err
		}
		if b == nil {
			b = []byte{}
		}
		tx.pending[p] = b
	}
	for i := range tx.side {
		sr := &tx.side[i]
		names := make([]string, 0, len(sr.files))
		for p := range sr.files {
			names = append(names, p)
		}
		sort.Strings(names)
		files := make(map[string][]byte, len(sr.files))
		for _, p := range names {
			b, err := fn(sr.ref, p, sr.files[p])
			if err != nil {
				return err
			}
			files[p] = b
		}
		sr.files = files
	}
	return nil
}

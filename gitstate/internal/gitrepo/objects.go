package gitrepo

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate/internal/gitcli"
	"github.com/go-git/go-git/v5/plumbing"
)

// Objects reads and writes git objects in "<common dir>/objects":
// loose objects, packs (through their indexes) and the object
// directories of objects/info/alternates. Transactions write their objects
// as one pack each (see writePack); git's own repack rolls them up (see
// Store.maintain). Nothing here deletes a pack or an object.
//
// The git CLI may repack at any moment (gc writes a new pack, deletes the old
// ones and the loose objects now packed). A pack already open stays readable
// after it is deleted; a lookup that fails is retried after the list of packs
// is read again. The Store's objMu guards it.
type Objects struct {
	dir     string      // "<common dir>/objects"
	alt     []string    // alternate object directories, read at scan
	packs   []*packFile // newest first
	scanned bool        // packs reflects the directory
	// sinceScan counts the packs added since the last scan (added)
	sinceScan int
	last      *packFile                 // the pack of the last hit, tried first
	cache     map[packKey]*cachedObject // see objcache.go
	cached    int                       // bytes of data in cache
	ops       uint64                    // operations begun (Age)
	ixc       indexCache                // blocks of the big pack indexes, shared by the packs
	win       packWindow                // the bytes of a pack read last (packwindow.go)
	// keeps are the .keep files of the packs written since the writer
	// lock was taken; they are removed (releaseKeeps) before it is
	// released, once the ref naming the packs' objects has moved or the
	// transaction has failed.
	keeps []string
	// written are the packs written since the writer lock was taken
	// (WrittenPacks).
	written []WrittenPack
	sync    fsyncPolicy
	cat     *gitCat // objects the reader above cannot serve, read through git
	// tmpDir is where new packs are written before they are renamed into
	// objects/pack ("<common dir>/codex/tmp"; see writeRename).
	tmpDir string
	shared sharedPerm   // core.sharedRepository
	phase  func(string) // Store.phase: the stages of writing a pack, and rescans
	// zr is reused: a new decompressor allocates tens of KB, more than
	// the objects it inflates here; deflate is the compressor's table
	// (deflate.go), 16 KiB, made at the first write.
	deflate *deflateTable
	zr      io.ReadCloser
}

func (o *Objects) read(t plumbing.ObjectType, h plumbing.Hash) (packed, error) {
	v, err := o.find(h)
	if err == nil && v.typ != t {
		err = fmt.Errorf("%s is a %s: %w", h, v.typ, plumbing.ErrObjectNotFound)
	}
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		// gone for good (pruned beside a writer): a transaction over it
		// refuses to commit (see Snapshot.missing)
		return packed{}, fmt.Errorf("gitstate: read %s %s: %w", t, h, ErrObjectMissing)
	}
	if err != nil {
		return packed{}, fmt.Errorf("gitstate: read %s %s: %w", t, h, err)
	}
	return v, nil
}

// Has reports whether h is in the repository (retrying after a repack as
// read does): ErrObjectMissing if not. Like git's has_object it answers
// from where the object is listed, an index entry in a pack that is still
// there or a loose file, and reads none of its bytes: a write checks the
// tip's top-level trees this way (Store.topLevelReads), and reading them
// in full cost what those trees weigh, which grows with the state (issue
// 27: 7 trees of a week-old state against 3 of an empty one, each a delta
// chain to resolve, ~0.3 ms of a ~7 ms write as a process).
func (o *Objects) Has(h plumbing.Hash) error {
	err := o.locate(h)
	if err != nil && movedByRepack(err) {
		o.scanned = false
		err = o.locate(h)
	}
	if err != nil && movedByRepack(err) {
		// what the reader above cannot see (an index version it does
		// not know, a promisor's): git tells
		_, err = o.viaGit(h)
	}
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return fmt.Errorf("gitstate: object %s: %w", h, ErrObjectMissing)
	}
	return err
}

// locate is lookup without the read: the pack whose index lists h is
// opened (so a pack a repack deleted since it was listed counts as gone,
// as it does for a read, and the next read of it finds the file open), or
// the loose file is found.
func (o *Objects) locate(h plumbing.Hash) error {
	if !o.scanned {
		if err := o.scan(); err != nil {
			return err
		}
	}
	if p, _, ok := o.findPacked(h); ok {
		return o.openPack(p)
	}
	s := h.String()
	for _, d := range append([]string{o.dir}, o.alt...) {
		_, err := os.Stat(d + "/" + s[:2] + "/" + s[2:])
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return plumbing.ErrObjectNotFound
}

// WidenIndexCache readies the big indexes for a batch of lookups
// scattered over them, such as a sync's checks or a first reduce of a
// whole state, until restore is called: each is mapped whole at its
// first lookup meanwhile (packFile.mapIndex), and restore unmaps them.
// Where mapping fails, the cache of their blocks holds up to blocks
// blocks (of 1 KiB) meanwhile (indexCache.widen). A call while a batch
// is under way (two goroutines' batches taking turns under the Store's
// lock) changes nothing, and its restore nothing either: the first
// batch's restore ends both.
func (o *Objects) WidenIndexCache(blocks int) (restore func()) {
	if o.ixc.widened() {
		// a batch is under way (another goroutine's, taking turns with
		// this one under the caller's lock): its restore unmaps
		return func() {}
	}
	narrow := o.ixc.widen(blocks)
	return func() {
		for _, p := range o.packs {
			p.unmapIndex()
		}
		narrow()
	}
}

// find looks h up, reading the list of packs again once if the lookup may
// have missed a repack, and asks git for what is still not found (git's
// own reader sees the same directory and copes with repacks itself).
func (o *Objects) find(h plumbing.Hash) (packed, error) {
	v, err := o.lookup(h)
	if err != nil && movedByRepack(err) {
		o.scanned = false
		if o.phase != nil {
			o.phase("rescan") // a benchmark's count of turns that rescan
		}
		v, err = o.lookup(h)
	}
	if err != nil && movedByRepack(err) {
		v, err = o.viaGit(h)
	}
	return v, err
}

// movedByRepack reports the errors of a lookup whose view of the object
// directory may be out of date: the object is in a pack not yet listed, or a
// listed pack was deleted before it was opened.
func movedByRepack(err error) bool {
	return errors.Is(err, plumbing.ErrObjectNotFound) || errors.Is(err, fs.ErrNotExist)
}

// lookup finds h in the packs (the last hit's pack first), then loose, then
// in the alternates' loose objects.
func (o *Objects) lookup(h plumbing.Hash) (packed, error) {
	if !o.scanned {
		if err := o.scan(); err != nil {
			return packed{}, err
		}
	}
	if p, off, ok := o.findPacked(h); ok {
		return o.readAt(p, off, 0)
	}
	for _, d := range append([]string{o.dir}, o.alt...) {
		v, err := readLoose(d, h)
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			return v, err
		}
	}
	return packed{}, plumbing.ErrObjectNotFound
}

func (o *Objects) findPacked(h plumbing.Hash) (*packFile, int64, bool) {
	if o.last != nil && o.last.opened() {
		if off, ok := o.last.find(h); ok {
			return o.last, off, true
		}
	}
	// packs already opened first (a binary search each), then the others,
	// newest first, opening each as it is reached
	for _, p := range o.packs {
		if p == o.last || !p.opened() {
			continue
		}
		if off, ok := p.find(h); ok {
			o.last = p
			return p, off, true
		}
	}
	for _, p := range o.packs {
		if p.opened() || p.bad {
			continue
		}
		if err := p.openIndex(); err != nil {
			p.bad = true // deleted since listed, or not ours to judge: git reports it
			continue
		}
		if off, ok := p.find(h); ok {
			o.last = p
			return p, off, true
		}
	}
	return nil, 0, false
}

// scan reads the list of packs, newest first as git orders them (cruft
// packs last, see below), keeping the packs already known (in their order,
// after the new ones: a scan runs when a lookup missed, which is mostly for
// what another process just wrote) and dropping those gone from the
// directory. Only new packs are stat'ed; none is opened (see findPacked).
func (o *Objects) scan() error {
	dirs := []string{o.dir}
	o.alt = readAlternates(o.dir, 0)
	dirs = append(dirs, o.alt...)
	type found struct {
		dir, name string
		mtime     time.Time
		cruft     bool
		size      int64
	}
	old := map[string]*packFile{}
	for _, p := range o.packs {
		old[p.name] = p
	}
	var list []found
	for _, d := range dirs {
		entries, err := os.ReadDir(filepath.Join(d, "pack"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("gitstate: list packs: %w", err)
		}
		files := make(map[string]bool, len(entries))
		for _, e := range entries {
			files[e.Name()] = true
		}
		for _, e := range entries {
			name, ok := strings.CutSuffix(e.Name(), ".idx")
			// like git, an index without its pack is not a pack (a
			// deletion or a write cut short)
			if !ok || !strings.HasPrefix(name, "pack-") || !files[name+".pack"] {
				continue
			}
			if p, ok := old[name]; ok {
				p.seen, p.bad = true, false // a pack that failed to open is tried again
				continue
			}
			var mtime time.Time
			var size int64
			if fi, err := e.Info(); err == nil {
				mtime, size = fi.ModTime(), fi.Size()
			}
			list = append(list, found{d, name, mtime, files[name+".mtimes"], size})
		}
	}
	// Cruft packs (git gc's unreachable objects, those with a .mtimes)
	// last: what git codex reads is reachable, so a lookup that missed the
	// pack it tried first searched a cruft pack's index for nothing — in a
	// day-behind sync of the simulated team, 4,000 lookups in a cruft pack
	// of 213k objects, none found (docs/PERFORMANCE.md, "The day-behind
	// sync side by side on two CPUs"). An object there is still found,
	// after the others.
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].cruft != list[j].cruft {
			return list[j].cruft
		}
		return list[i].mtime.After(list[j].mtime)
	})
	packs := make([]*packFile, 0, len(list)+len(o.packs))
	for _, f := range list {
		packs = append(packs, &packFile{dir: f.dir, name: f.name, count: countFromIndexSize(f.size), cache: &o.ixc})
	}
	for _, p := range o.packs {
		if p.seen {
			p.seen = false
			packs = append(packs, p)
			continue
		}
		if p == o.last {
			o.last = nil
		}
		o.dropCached(p)
		p.close()
	}
	o.packs, o.scanned, o.sinceScan = packs, true, 0
	return nil
}

// added makes a pack of count objects (0: not known yet) this process
// just wrote, or another writer did (see packLog), known without a scan,
// as the newest (its index is opened when a lookup reaches it).
func (o *Objects) added(name string, count int) {
	if !o.scanned {
		return // the next lookup scans
	}
	for _, p := range o.packs {
		if p.name == name && p.dir == o.dir {
			return // a scan found it first
		}
	}
	o.packs = append([]*packFile{{dir: o.dir, name: name, count: count, cache: &o.ixc}}, o.packs...)
	if o.sinceScan++; o.sinceScan >= rescanAfter {
		o.scanned = false // the next lookup lets go of the deleted packs
	}
}

// rescanAfter is how many packs added since the last scan make the next
// lookup scan the directory. A scan also drops the packs git's repack
// deleted, closing their files; without one, a process that finds
// everything it reads in the packs it knows (its own writes, the packs
// other writers announce) kept every pack it ever opened open: ~20,000
// descriptors of deleted packs in one process writing a month's state
// (TestMakeBigState failed with "too many open files"), while its writes
// skipped their own rescan because git's repack was running
// (Store.maintain). Counted as they are added (written, or learned of
// from the pack log): six simulated hours of the month took as long as
// without the bound (docs/PERFORMANCE.md). A scan costs a listing of the
// pack directory (~0.3 ms at a few dozen packs).
const rescanAfter = 64

// readAlternates lists the object directories named by
// "<dir>/info/alternates", recursively as git does (to depth 5).
func readAlternates(dir string, depth int) []string {
	b, err := os.ReadFile(filepath.Join(dir, "info", "alternates"))
	if err != nil || depth > 5 {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '"' {
			// a path git quoted (it holds a newline, a quote or a
			// byte git escapes), as unquote_c_style reads it
			u, ok := gitcli.UnquoteC(line)
			if !ok {
				continue // git ignores it too, with an error
			}
			line = u
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(dir, line)
		}
		out = append(out, line)
		out = append(out, readAlternates(line, depth+1)...)
	}
	return out
}

func (o *Objects) Close() {
	for _, p := range o.packs {
		p.close()
	}
	if o.cat != nil {
		o.cat.close()
		o.cat = nil
	}
	o.packs, o.last, o.cache, o.scanned = nil, nil, nil, false
	o.win = packWindow{}
}

func (o *Objects) Blob(h plumbing.Hash) ([]byte, error) {
	v, err := o.read(plumbing.BlobObject, h)
	return v.data, err
}

func (o *Objects) Tree(h plumbing.Hash) (*Tree, error) {
	v, err := o.read(plumbing.TreeObject, h)
	if err != nil {
		return nil, err
	}
	t, err := decodeTree(v.data)
	if err != nil {
		return nil, fmt.Errorf("gitstate: decode tree %s: %w", h, err)
	}
	t.Hash = h
	return t, nil
}

func (o *Objects) Commit(h plumbing.Hash) (*Commit, error) {
	v, err := o.read(plumbing.CommitObject, h)
	if err != nil {
		return nil, err
	}
	c, err := decodeCommit(v.data)
	if err != nil {
		return nil, fmt.Errorf("gitstate: decode commit %s: %w", h, err)
	}
	c.Hash = h
	return c, nil
}

// encoder is what the store's tree and commit types implement to serialise
// themselves.
type encoder interface {
	encode() ([]byte, error)
}

// Encode serialises a tree or commit into b and returns its hash.
func (b *objectBatch) Encode(t plumbing.ObjectType, v encoder) (plumbing.Hash, error) {
	data, err := v.encode()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("gitstate: encode %s: %w", t, err)
	}
	return b.add(t, data), nil
}

// Write stores the batch as one pack; an empty batch writes nothing.
func (o *Objects) Write(b *objectBatch) error {
	if len(b.objs) == 0 {
		return nil
	}
	if o.deflate == nil {
		o.deflate = new(deflateTable)
	}
	name, keep, err := writePack(o.deflate, o.dir, o.tmpDir, b.objs, o.sync, o.shared, o.phase)
	if err != nil {
		return err
	}
	o.keeps = append(o.keeps, keep)
	o.written = append(o.written, WrittenPack{Name: name, Objects: len(b.objs)})
	o.added(name, len(b.objs))
	return nil
}

// WrittenPack is a pack Write wrote: its name ("pack-<checksum>") and how
// many objects it holds.
type WrittenPack struct {
	Name    string
	Objects int
}

// WrittenPacks returns the packs written since the last call, and forgets
// them.
func (o *Objects) WrittenPacks() []WrittenPack {
	w := o.written
	o.written = nil
	return w
}

// ReleaseKeeps removes the .keep files of the packs written under the
// writer lock: from now on git's repack may roll those packs up like any
// other (their objects are reachable from the ref, or garbage).
func (o *Objects) ReleaseKeeps() {
	for _, k := range o.keeps {
		os.Remove(k)
	}
	o.keeps = o.keeps[:0]
}

// SweepKeeps removes the .keep files git codex wrote that a writer killed
// between writing a pack and releasing its keep left behind, and such a
// writer's temporary files. The caller holds the writer lock, and every
// writer releases its keeps and renames its temporary files before it
// lets go of that lock, so a git codex keep seen now is a dead writer's.
// Other keeps (receive-pack's, a person's) are left alone.
func (o *Objects) SweepKeeps() {
	if o.tmpDir != "" {
		if tmps, err := os.ReadDir(o.tmpDir); err == nil {
			for _, e := range tmps {
				os.Remove(filepath.Join(o.tmpDir, e.Name()))
			}
		}
	}
	dir := filepath.Join(o.dir, "pack")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".keep") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		b, err := readFileRaw(p)
		if err == nil && strings.HasPrefix(string(b), keepPrefix+" ") {
			os.Remove(p)
		}
	}
}

// LocalPacks counts the packs in the repository's own object directory.
func (o *Objects) LocalPacks() int {
	n := 0
	for _, p := range o.packs {
		if p.dir == o.dir {
			n++
		}
	}
	return n
}

// Read returns an object's content as stored, undecoded; an object of
// another type is not found.
func (o *Objects) Read(t plumbing.ObjectType, h plumbing.Hash) ([]byte, error) {
	v, err := o.read(t, h)
	return v.data, err
}

// anyType reads an object whatever its type.
func (o *Objects) anyType(h plumbing.Hash) (packed, error) {
	v, err := o.find(h)
	if err != nil {
		return packed{}, fmt.Errorf("gitstate: read %s: %w", h, err)
	}
	return v, nil
}

// Size returns an object's size. (The store reads objects whole, so a huge
// blob is loaded once to be refused; it is never kept or written.)
func (o *Objects) Size(h plumbing.Hash) (int64, error) {
	v, err := o.anyType(h)
	return int64(len(v.data)), err
}

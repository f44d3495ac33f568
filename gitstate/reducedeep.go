package gitstate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// deepSet is what a process keeps of a reduction whose parts are kept
// deep (KeepParts.Depth): for each directory, the part of the tree last
// reduced there, with that tree's entries and its records' parts
// (keptRecords) when the directory was read afresh. A directory whose tree did not change since is not
// visited by a Reduce, nor are the directories below it, whose parts stay
// as they were: those of its tree. So the set, and the file made of it,
// holds every part of the state last reduced, however little a Reduce
// read. (A part of a tree the directory no longer has is kept till the
// directory is reduced again: it is named by its tree, so it is never
// wrong, only of no use.)
type deepSet struct {
	load    sync.Once
	parts   map[string]keptPart // by directory; under reduceMemo.mu
	dirty   bool                // parts changed since the file was written
	written time.Time           // when this process last wrote it; zero: never
}

// reduceKeptDeep is Reduce with KeepParts.Depth over 1.
func (sn *Snapshot) reduceKeptDeep(dir string, h plumbing.Hash, t *gitrepo.Tree, r Reduction) (any, error) {
	set := sn.s.loadDeep(r)
	// a directory read afresh may be most of a month's (a first server, a
	// past state): its ~80k lookups, scattered over the indexes, would
	// miss the 512 blocks a long-lived process keeps at every step
	defer sn.s.widenIndexCache(syncIndexBlocks)()
	k := &keptRun{parts: map[string]keptPart{}, depth: r.Keep.Depth, set: set}
	v, err := sn.reduceTree(dir, h, t, r, 0, k)
	if err != nil || r.Keep.ReadOnly {
		return v, err
	}
	if parts := sn.s.reduced.mergeDeep(set, k.parts, r.Keep.Every, time.Now()); parts != nil {
		// outside the memory's lock: other reads go on meanwhile
		if data, err := encodeDeep(r, parts); err == nil {
			sn.s.replaceKept(sn.s.deepFile(r), data)
		}
	}
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

// deepFile is where r's deep parts are kept, "" when its name cannot name
// a file.
func (s *Store) deepFile(r Reduction) string {
	f := s.keptFile(r)
	if f == "" {
		return ""
	}
	return f[:len(f)-len(".json")] + ".parts"
}

// loadDeep is r's deep set, read from its file once per process (its
// parts stay bytes until a Reduce uses them: keptDeep).
func (s *Store) loadDeep(r Reduction) *deepSet {
	m := &s.reduced
	m.mu.Lock()
	set := m.deep[r.Name]
	if set == nil {
		if m.deep == nil {
			m.deep = map[string]*deepSet{}
		}
		set = &deepSet{parts: map[string]keptPart{}}
		m.deep[r.Name] = set
	}
	m.mu.Unlock()
	set.load.Do(func() {
		file := s.deepFile(r)
		if file == "" {
			return
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return
		}
		parts, err := decodeDeep(r, data)
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

// The deep file is binary, not JSON as <Name>.json is: it holds a part
// per directory (~22k for a month's mail at the retention default), and
// decoding them as JSON cost more than the page it serves. It is
//
//	deepMagic, uvarint len(Name), Name, uvarint count,
//	count × (uvarint len(dir), dir, 20-byte tree id, uvarint len(part), part,
//	         uvarint len(records), records),
//	CRC-32C (Castagnoli) of all that, 4 bytes big-endian
//
// where a directory's records (its tree's entries, keptRecords) are
//
//	uvarint count, count × (uvarint len(name), name, 20-byte id,
//	                        0 for a subdirectory (the id its tree's),
//	                        or uvarint len(part)+1 and part for a record)
//
// The checksum is what lets a part be trusted: a tree id says which tree
// a part was made of, but not that its bytes are those written; a file
// whose sum, magic or name does not match is not used at all.
const deepMagic = "git codex kept parts 2\n"

var errDeepFile = errors.New("not a kept parts file")

func deepSum(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }

func encodeDeep(r Reduction, parts map[string]keptPart) ([]byte, error) {
	dirs := make([]string, 0, len(parts))
	size := len(deepMagic) + len(r.Name) + 16
	for dir, p := range parts {
		dirs = append(dirs, dir)
		// what it will take, where it is known: bytes read from the file
		// (most of them, in a process that read one) are written as they are
		size += len(dir) + 40
		if b, ok := p.part.(keptBytes); ok {
			size += len(b)
		}
		if b, ok := p.records.(keptBytes); ok {
			size += len(b)
		}
	}
	sort.Strings(dirs) // the same parts, the same bytes
	var b bytes.Buffer
	b.Grow(size)
	b.WriteString(deepMagic)
	putString := func(s string) {
		b.Write(binary.AppendUvarint(nil, uint64(len(s))))
		b.WriteString(s)
	}
	putString(r.Name)
	b.Write(binary.AppendUvarint(nil, uint64(len(dirs))))
	for _, dir := range dirs {
		p := parts[dir]
		data, ok := p.part.(keptBytes)
		if !ok {
			var err error
			if data, err = r.Keep.Encode(p.part); err != nil {
				return nil, err
			}
		}
		recs, err := encodeRecords(r, p.records)
		if err != nil {
			return nil, err
		}
		putString(dir)
		b.Write(p.tree[:])
		b.Write(binary.AppendUvarint(nil, uint64(len(data))))
		b.Write(data)
		b.Write(binary.AppendUvarint(nil, uint64(len(recs))))
		b.Write(recs)
	}
	b.Write(binary.BigEndian.AppendUint32(nil, deepSum(b.Bytes())))
	return b.Bytes(), nil
}

func decodeDeep(r Reduction, data []byte) (map[string]keptPart, error) {
	if len(data) < len(deepMagic)+4 {
		return nil, errDeepFile
	}
	body, sum := data[:len(data)-4], data[len(data)-4:]
	if deepSum(body) != binary.BigEndian.Uint32(sum) || !bytes.HasPrefix(body, []byte(deepMagic)) {
		return nil, errDeepFile
	}
	d := deepReader{b: body[len(deepMagic):]}
	if name := d.bytes(); string(name) != r.Name {
		return nil, errDeepFile
	}
	n := d.uvarint()
	if n > uint64(len(d.b)) { // each entry takes more than a byte
		return nil, errDeepFile
	}
	parts := make(map[string]keptPart, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		dir := string(d.bytes())
		var tree plumbing.Hash
		copy(tree[:], d.next(len(tree)))
		data, recs := d.bytes(), d.bytes()
		if d.err != nil {
			break
		}
		p := keptPart{tree: tree, part: keptBytes(data)}
		if len(recs) > 0 {
			p.records = keptBytes(recs)
		}
		parts[dir] = p
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, errDeepFile
	}
	return parts, nil
}

// deepReader reads a deep file's fields; past its end (or at a length
// that does not fit) it sets err and reads nothing more.
type deepReader struct {
	b   []byte
	err error
}

func (d *deepReader) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errDeepFile
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *deepReader) next(n int) []byte {
	if d.err != nil || n > len(d.b) {
		d.err = errDeepFile
		return nil
	}
	out := d.b[:n:n]
	d.b = d.b[n:]
	return out
}

func (d *deepReader) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.err = errDeepFile
		return nil
	}
	return d.next(int(n))
}

// keptRecord is an entry of a kept directory's tree: a record's part,
// by its name and blob id (Leaf's part of the same path and bytes), or a
// subdirectory's tree id (dir), which lets ReadKept walk kept trees.
type keptRecord struct {
	name string
	blob plumbing.Hash // the blob's id, or the subdirectory's tree's
	part any           // keptBytes until used
	dir  bool
}

// keptRecords are the records of a directory whose part a Reduce makes
// afresh: those kept of the tree last reduced there (old), and those of
// this tree (now). A record that is in both with the same blob is not
// read: a day's changes to a month's mail change ~4k of its ~21k
// directories but few of the records in them, and a state a week back
// holds 49,144 records of which 41 are not at the tip (issue 27).
type keptRecords struct {
	old    []keptRecord
	byName map[string]int // old's, in a big directory
	now    []keptRecord
}

// keptRecordsOf is what set keeps of dir's records.
func (m *reduceMemo) keptRecordsOf(set *deepSet, dir string) *keptRecords {
	m.mu.Lock()
	p := set.parts[dir]
	m.mu.Unlock()
	kr := &keptRecords{}
	switch v := p.records.(type) {
	case []keptRecord:
		kr.old = v
	case keptBytes:
		kr.old, _ = decodeRecords(v) // (the file's sum held: bytes this wrote)
	}
	if len(kr.old) > 16 {
		kr.byName = make(map[string]int, len(kr.old))
		for i, rec := range kr.old {
			kr.byName[rec.name] = i
		}
	}
	return kr
}

// find is the kept part of the record name, blob, if there is one.
func (kr *keptRecords) find(r Reduction, name string, blob plumbing.Hash) (any, bool) {
	if kr == nil {
		return nil, false
	}
	i := -1
	if kr.byName != nil {
		if j, ok := kr.byName[name]; ok {
			i = j
		}
	} else {
		for j := range kr.old {
			if kr.old[j].name == name {
				i = j
				break
			}
		}
	}
	if i < 0 || kr.old[i].dir || kr.old[i].blob != blob {
		return nil, false
	}
	v := kr.old[i].part
	if b, raw := v.(keptBytes); raw {
		var err error
		if v, err = r.Keep.Decode(b); err != nil {
			return nil, false
		}
	}
	kr.now = append(kr.now, keptRecord{name: name, blob: blob, part: v})
	return v, true
}

// add notes a record's part made afresh.
func (kr *keptRecords) add(name string, blob plumbing.Hash, v any) {
	if kr != nil {
		kr.now = append(kr.now, keptRecord{name: name, blob: blob, part: v})
	}
}

// addDir notes a subdirectory and its tree.
func (kr *keptRecords) addDir(name string, tree plumbing.Hash) {
	if kr != nil {
		kr.now = append(kr.now, keptRecord{name: name, blob: tree, dir: true})
	}
}

// made is the records of the tree just reduced (nil when it has none).
func (kr *keptRecords) made() any {
	if kr == nil || len(kr.now) == 0 {
		return nil
	}
	return kr.now
}

func encodeRecords(r Reduction, v any) ([]byte, error) {
	switch v := v.(type) {
	case keptBytes:
		return v, nil
	case []keptRecord:
		b := binary.AppendUvarint(nil, uint64(len(v)))
		for _, rec := range v {
			b = binary.AppendUvarint(b, uint64(len(rec.name)))
			b = append(b, rec.name...)
			b = append(b, rec.blob[:]...)
			if rec.dir {
				b = append(b, 0)
				continue
			}
			data, ok := rec.part.(keptBytes)
			if !ok {
				var err error
				if data, err = r.Keep.Encode(rec.part); err != nil {
					return nil, err
				}
			}
			b = binary.AppendUvarint(b, uint64(len(data))+1)
			b = append(b, data...)
		}
		return b, nil
	}
	return nil, nil
}

func decodeRecords(data []byte) ([]keptRecord, error) {
	d := deepReader{b: data}
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		return nil, errDeepFile
	}
	out := make([]keptRecord, 0, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		var rec keptRecord
		rec.name = string(d.bytes())
		copy(rec.blob[:], d.next(len(rec.blob)))
		if n := d.uvarint(); n == 0 {
			rec.dir = true
		} else if n-1 > uint64(len(d.b)) {
			d.err = errDeepFile
		} else {
			rec.part = keptBytes(d.next(int(n - 1)))
		}
		out = append(out, rec)
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, errDeepFile
	}
	return out, nil
}

// ReadKept is Read of a record below dir, which r reduced with a deep
// keep (KeepParts.Depth): the trees on the way are taken from the
// entries the keep holds where it holds the very trees this snapshot has
// (a tree id names the entries), and read from git elsewhere. The page
// reads the newest 300 records of each kind after its reduce: by path,
// that read ~1,200 trees no reduce had read (the tip's parts came from
// the file), ~25 ms of a fresh server's ~80 ms first answer (issue 27).
func (sn *Snapshot) ReadKept(r Reduction, dir, path string) ([]byte, error) {
	dir = strings.Trim(dir, "/")
	rel, ok := strings.CutPrefix(path, dir+"/")
	if r.Keep == nil || r.Keep.Depth <= 1 || dir == "" || !ok {
		return sn.Read(path)
	}
	m := &sn.s.reduced
	m.mu.Lock()
	set := m.deep[r.Name]
	m.mu.Unlock()
	if set == nil {
		return sn.Read(path)
	}
	parts, err := splitPath(dir)
	if err != nil {
		return nil, err
	}
	e, err := sn.lookup(parts)
	if err != nil || e == nil || e.Mode != filemode.Dir {
		return sn.Read(path)
	}
	cur, tree := dir, e.Hash
	names := strings.Split(rel, "/")
	for i, name := range names {
		rec, ok := m.keptEntry(set, cur, tree, name)
		if !ok || rec.dir != (i < len(names)-1) {
			return sn.Read(path)
		}
		if !rec.dir {
			b, err := sn.s.readBlob(rec.blob)
			return b, sn.note(err)
		}
		cur, tree = cur+"/"+name, rec.blob
	}
	return sn.Read(path)
}

// keptEntry is the entry name of dir's tree tree, if set holds that
// tree's entries.
func (m *reduceMemo) keptEntry(set *deepSet, dir string, tree plumbing.Hash, name string) (keptRecord, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := set.parts[dir]
	if !ok || p.tree != tree {
		return keptRecord{}, false
	}
	recs, ok := p.records.([]keptRecord)
	if b, raw := p.records.(keptBytes); raw {
		var err error
		if recs, err = decodeRecords(b); err != nil {
			return keptRecord{}, false
		}
		p.records, ok = recs, true
		set.parts[dir] = p // decoded once
	}
	if !ok {
		return keptRecord{}, false
	}
	// entries are in the tree's order, names unique: a binary search
	// would need git's order for directories; a directory holds few
	for _, rec := range recs {
		if rec.name == name {
			return rec, true
		}
	}
	return keptRecord{}, false
}

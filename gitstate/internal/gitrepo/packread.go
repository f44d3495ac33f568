package gitrepo

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// packFile is one pack of the object directory. A small index is read
// whole (readIndexMax); a big one is read a block at a time, through the
// Objects' indexCache, as a lookup's binary search reaches its blocks: so
// opening a repository costs the same with 100 objects or a million
// (go-git read and decoded every index in full, ~1,000 reads and the whole
// file per process), and what a process holds of its indexes does not grow
// with the repository (see indexCache). The index is opened when a lookup
// first reaches the pack, as git opens its indexes, and the pack itself
// on first read: a process that finds the packs other writers made since
// its last look opens only those holding what it reads (the newest, for
// the tip), not all of them.
type packFile struct {
	dir   string      // the object directory holding it
	name  string      // "pack-<checksum>", without extension
	fan   []byte      // the index's header and fan-out table; nil until openIndex
	idx   []byte      // a small index, whole; nil for a big one (read through cache)
	ixf   *rawFile    // a big index, open; nil for a small one
	size  int64       // the index's size in bytes
	cache *indexCache // the blocks of big indexes (the Objects'); nil until openIndex
	ixid  uint64      // the big index's number in cache (its blocks' keys)
	count int         // objects in the pack; until openIndex, reckoned from the size of the .idx
	f     *rawFile    // nil until first read
	seen  bool        // still listed, during a scan
	bad   bool        // its index could not be opened: skipped until a scan drops it
	// mapped says idx is the big index mapped while the cache is widened
	// (mapIndex), unmapped when it narrows
	mapped     bool
	unmappable bool // mapping it failed: not tried again
}

// idx v2 layout: magic and version (8 bytes), 256 fan-out counts, the sorted
// names, their CRCs, their 31-bit offsets (or indexes into the table of
// 64-bit offsets that follows), the pack's checksum and the index's own.
const (
	idxHeader = 8
	idxFanout = idxHeader + 256*4
)

// countFromIndexSize reckons how many objects an index of size bytes
// lists: 28 bytes each (name, CRC, offset) past the header and fan-out,
// plus the two checksums; exact unless the pack is over 2 GiB.
func countFromIndexSize(size int64) int {
	return int(max(size-idxFanout-40, 0) / 28)
}

// opened reports whether the index has been opened.
func (p *packFile) opened() bool { return p.fan != nil }

// openIndex reads the pack's .idx, whole or its fan-out only (see
// readIndexMax), and checks its shape.
func (p *packFile) openIndex() error {
	if p.fan != nil {
		return nil
	}
	f, err := openRaw(p.dir+"/pack/"+p.name+".idx", syscall.O_RDONLY, 0)
	if err != nil {
		return err
	}
	keep := false
	defer func() {
		if !keep {
			f.Close()
		}
	}()
	size, _, err := f.stat()
	if err != nil {
		return err
	}
	if size < idxFanout+40 || size > 1<<40 {
		return fmt.Errorf("gitstate: %s.idx: %d bytes is not a pack index", p.name, size)
	}
	read := size
	if size > readIndexMax {
		read = idxFanout
	}
	data := make([]byte, read)
	if _, err := f.ReadAt(data, 0); err != nil {
		return fmt.Errorf("gitstate: read %s.idx: %w", p.name, err)
	}
	if !bytes.Equal(data[:4], []byte{0xff, 't', 'O', 'c'}) {
		// no magic: a version 1 index (pack.indexVersion=1, old git),
		// rewritten in memory whatever its size (old git's, rare)
		if read < size {
			data = make([]byte, size)
			if _, err := f.ReadAt(data, 0); err != nil {
				return fmt.Errorf("gitstate: read %s.idx: %w", p.name, err)
			}
		}
		v2, err := indexV1toV2(data)
		if err != nil {
			return fmt.Errorf("gitstate: %s.idx: %w", p.name, err)
		}
		p.idx, p.fan, p.size, p.count = v2, v2[:idxFanout], int64(len(v2)), int(binary.BigEndian.Uint32(v2[idxFanout-4:]))
		return nil
	}
	if !bytes.Equal(data[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		// a version this reader does not know: objects are read through git
		return fmt.Errorf("gitstate: %s.idx is a version %d pack index: %w", p.name, binary.BigEndian.Uint32(data[4:8]), errIndexVersion)
	}
	count := int(binary.BigEndian.Uint32(data[idxFanout-4:]))
	if int64(idxFanout+count*28+40) > size {
		return fmt.Errorf("gitstate: %s.idx is truncated", p.name)
	}
	p.fan, p.size, p.count = data[:idxFanout], size, count
	if read == size {
		p.idx = data
		return nil
	}
	p.ixf, keep = f, true
	if p.cache == nil {
		p.cache = &indexCache{} // a pack not listed by an Objects (tests)
	}
	p.cache.open(p)
	return nil
}

// mapIndex maps a big index whole at the first lookup of a batch of them
// (the cache is widened: Objects.WidenIndexCache). A fresh clone's first page looks up
// ~7,400 objects of a month's state scattered over a 40 MB index: through
// the cache, 17,500 reads of a block each, a third of its time (issue 27);
// mapped, a lookup reads the index where it is, in the kernel's page
// cache, with no system call and no copy, as git reads its indexes. It is
// unmapped when the cache narrows again (unmapIndex), so a long-lived
// process holds no mapping between its batches: a mapped index's pages,
// once touched, count in its resident memory (see indexCache). Mapped at
// a lookup, not when the batch starts: a running page's poll is a batch
// too (each kind's reduce), mostly with no lookup at all. An index that
// cannot be mapped is read through the widened cache. Pack indexes
// are never rewritten in place (git writes a new file and renames it), so
// the mapping stays whole while it is held, even if a repack deletes the
// file (as git, which maps them too, this trusts that no one truncates an
// index in place: a read of a mapping past its file's end is SIGBUS). An
// index mapping failed for is not mapped again by this Objects.
func (p *packFile) mapIndex() {
	if p.ixf == nil || p.mapped || p.unmappable || !p.cache.widened() {
		return
	}
	// the file as long as when it was opened (touching a mapping past a
	// file's end kills the process: SIGBUS), and a length an int holds
	size, _, err := p.ixf.stat()
	if err != nil || size < p.size || int64(int(p.size)) != p.size {
		p.unmappable = true
		return
	}
	b, err := mapFile(p.ixf, p.size)
	if err != nil {
		p.unmappable = true
		return
	}
	p.cache.drop(p) // its blocks are of no more use
	p.idx, p.mapped = b, true
}

// unmapIndex ends mapIndex: the index is read a block at a time again.
func (p *packFile) unmapIndex() {
	if !p.mapped {
		return
	}
	unmapFile(p.idx)
	p.idx, p.mapped = nil, false
}

// errIndexVersion marks an index of a version this reader does not know.
var errIndexVersion = errors.New("unknown pack index version")

// indexV1toV2 rewrites a version 1 index (the fan-out, then for each object
// its 4-byte offset and its name, then the pack's checksum and the index's)
// in version 2's layout, which the rest of the reader knows; the CRCs,
// which only version 2 has, are left zero (nothing here reads them).
func indexV1toV2(v1 []byte) ([]byte, error) {
	if len(v1) < 256*4+40 {
		return nil, errors.New("too short for a version 1 pack index")
	}
	count := int(binary.BigEndian.Uint32(v1[255*4:]))
	if 256*4+count*24+40 != len(v1) {
		return nil, fmt.Errorf("a version 1 pack index of %d objects cannot be %d bytes", count, len(v1))
	}
	v2 := make([]byte, 0, idxFanout+count*28+40)
	v2 = append(v2, 0xff, 't', 'O', 'c', 0, 0, 0, 2)
	v2 = append(v2, v1[:256*4]...)
	ents := v1[256*4:]
	for i := 0; i < count; i++ {
		v2 = append(v2, ents[i*24+4:i*24+24]...)
	}
	v2 = append(v2, make([]byte, 4*count)...)
	for i := 0; i < count; i++ {
		v2 = append(v2, ents[i*24:i*24+4]...)
	}
	return append(v2, v1[256*4+count*24:]...), nil
}

// readIndexMax is the largest index read whole into memory: one read when
// the pack is opened, and no system call per lookup (a transaction's pack
// has an index of about 1.3 KB). Bigger ones (a clone's, gc's) are read
// through the indexCache. What the small ones hold stays bounded too: git's
// geometric repack keeps each pack at least twice the size of the next
// smaller, so the indexes under this size add up to about twice it, plus
// the transactions' packs not rolled up yet (fewer than the repack
// threshold).
const readIndexMax = 256 << 10

func (p *packFile) close() {
	p.unmapIndex()
	if p.ixf != nil {
		p.cache.drop(p)
		p.ixf.Close()
		p.ixf = nil
	}
	p.idx, p.fan = nil, nil
	if p.f != nil {
		p.f.Close()
		p.f = nil
	}
}

// at returns the len(buf) bytes of the index at off: a slice of the whole
// index, or of a cached block (valid until the next read of the cache), or
// buf filled from two blocks when they straddle a block's end.
func (p *packFile) at(off int, buf []byte) ([]byte, error) {
	if p.idx != nil {
		if off < 0 || off+len(buf) > len(p.idx) {
			return nil, fmt.Errorf("gitstate: %s.idx: read past its end", p.name)
		}
		return p.idx[off : off+len(buf)], nil
	}
	if p.ixf == nil || off < 0 || int64(off+len(buf)) > p.size {
		return nil, fmt.Errorf("gitstate: %s.idx: read past its end", p.name)
	}
	n, w := int64(off/indexBlockSize), off%indexBlockSize
	b, err := p.cache.block(p, n)
	if err != nil {
		return nil, fmt.Errorf("gitstate: read %s.idx: %w", p.name, err)
	}
	if w+len(buf) <= len(b) {
		return b[w : w+len(buf)], nil
	}
	if len(b) < indexBlockSize {
		return nil, fmt.Errorf("gitstate: %s.idx: shorter than when opened", p.name)
	}
	k := copy(buf, b[w:])
	if b, err = p.cache.block(p, n+1); err != nil {
		return nil, fmt.Errorf("gitstate: read %s.idx: %w", p.name, err)
	}
	if copy(buf[k:], b) < len(buf)-k {
		return nil, fmt.Errorf("gitstate: %s.idx: shorter than when opened", p.name)
	}
	return buf, nil
}

// find returns the offset of h in the pack. An index that cannot be read
// finds nothing (the lookup goes on to rescan and to git, which reports
// what is wrong).
func (p *packFile) find(h plumbing.Hash) (int64, bool) {
	if p.ixf != nil && !p.mapped {
		p.mapIndex() // if a batch of lookups has begun
	}
	lo := 0
	if h[0] > 0 {
		lo = int(binary.BigEndian.Uint32(p.fan[idxHeader+4*(int(h[0])-1):]))
	}
	hi := int(binary.BigEndian.Uint32(p.fan[idxHeader+4*int(h[0]):]))
	if hi > p.count || lo > hi {
		return 0, false // a corrupt fan-out: git fsck reports it
	}
	var buf [20]byte
	cmp := func(m int) (int, bool) {
		name, err := p.at(idxFanout+m*20, buf[:])
		if err != nil {
			return 0, false
		}
		return bytes.Compare(name, h[:]), true
	}
	if p.ixf != nil && hi-lo > gallopMin {
		// a big index, read a block at a time: start where h would be if
		// the bucket's names were spread evenly (they are hashes), then
		// gallop out from there to a bracket, which is then searched
		m, found, ok := p.bracket(h, &lo, &hi, cmp)
		if !ok {
			return 0, false
		}
		if found {
			return p.offset(m), true
		}
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		c, ok := cmp(m)
		switch {
		case !ok:
			return 0, false
		case c == 0:
			return p.offset(m), true
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return 0, false
}

// gallopMin is the fan-out bucket, in names, above which a lookup in a big
// index starts from h's expected place (bracket) instead of halving: a
// bucket of 50 names is a block of the index, which halving reads anyway.
const gallopMin = 64

// bracket narrows [lo, hi), the fan-out bucket of h, to a few names around
// h's expected place, or finds h there (its place m, found). A bucket's
// names are SHA-1 hashes, spread evenly, so h's place is about
// lo + (hi-lo) × (the bytes of h after the first, as a fraction); it is off
// by about √(hi-lo)/2 names, ~30 for a pack of a million objects, where a
// block of the index holds 51. Halving a bucket of a million-object pack
// (4,000 names) reads 7 blocks before it narrows to one; starting from the
// expected place and stepping out by √(hi-lo)/2, doubling, reads that
// place's block and mostly one more (issue 27: a write on a state of 64k
// records looked ~75 blocks up, each a system call; a lookup's cost no
// longer grows with the pack). ok is false when the index cannot be read.
func (p *packFile) bracket(h plumbing.Hash, lo, hi *int, cmp func(int) (int, bool)) (m int, found, ok bool) {
	span := *hi - *lo
	guess := *lo + int(uint64(binary.BigEndian.Uint32(h[1:5]))*uint64(span)>>32)
	step := max(1, int(math.Sqrt(float64(span)))/2)
	c, ok := cmp(guess)
	if !ok || c == 0 {
		return guess, ok, ok
	}
	if c < 0 {
		*lo = guess + 1
		for n := guess + step; n < *hi; n, step = n+step, step*2 {
			c, ok := cmp(n)
			if !ok || c == 0 {
				return n, ok, ok
			}
			if c > 0 {
				*hi = n
				break
			}
			*lo = n + 1
		}
		return 0, false, true
	}
	*hi = guess
	for n := guess - step; n >= *lo; n, step = n-step, step*2 {
		c, ok := cmp(n)
		if !ok || c == 0 {
			return n, ok, ok
		}
		if c < 0 {
			*lo = n + 1
			break
		}
		*hi = n
	}
	return 0, false, true
}

// offset returns the offset in the pack of the i-th object of the index,
// or -1 if the index cannot say.
func (p *packFile) offset(i int) int64 {
	var buf [8]byte
	offsets := idxFanout + p.count*24
	b, err := p.at(offsets+4*i, buf[:4])
	if err != nil {
		return -1
	}
	o := binary.BigEndian.Uint32(b)
	if o&(1<<31) == 0 {
		return int64(o)
	}
	large := offsets + p.count*4 + 8*int(o&^(1<<31))
	if int64(large+8) > p.indexSize()-40 {
		return -1
	}
	if b, err = p.at(large, buf[:]); err != nil {
		return -1
	}
	return int64(binary.BigEndian.Uint64(b))
}

// indexSize is the size of the index.
func (p *packFile) indexSize() int64 {
	if p.idx != nil {
		return int64(len(p.idx))
	}
	return p.size
}

// packed is an object read from a pack, cached by its place in the pack:
// delta chains share bases, and a base is found by offset, not by hash.
type packed struct {
	typ  plumbing.ObjectType
	data []byte
}

type packKey struct {
	p   *packFile
	off int64
}

// maxDeltaDepth bounds a delta chain (git's default --depth is 50).
const maxDeltaDepth = 10000

// readAt returns the object at off in the pack, resolving deltas. base
// looks up a REF_DELTA's base by hash anywhere in the repository.
func (o *Objects) readAt(p *packFile, off int64, depth int) (packed, error) {
	if v, ok := o.cachedAt(packKey{p, off}); ok {
		return v, nil
	}
	if depth > maxDeltaDepth {
		return packed{}, fmt.Errorf("gitstate: %s: delta chain too deep", p.name)
	}
	if err := o.openPack(p); err != nil {
		return packed{}, err
	}
	r := &packReader{w: &o.win, p: p, pos: off}
	c, err := r.ReadByte()
	if err != nil {
		return packed{}, fmt.Errorf("gitstate: %s at %d: %w", p.name, off, err)
	}
	typ := plumbing.ObjectType((c >> 4) & 7)
	size := uint64(c & 0x0f)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if c, err = r.ReadByte(); err != nil || shift > 60 {
			return packed{}, fmt.Errorf("gitstate: %s at %d: bad object header", p.name, off)
		}
		size |= uint64(c&0x7f) << shift
	}
	// a delta's own bytes are inflated before its base is read: they
	// follow its header in the window that read the header, and the base,
	// read first, moved the window elsewhere in the pack, so each delta of
	// a chain read its stretch of the pack twice (issue 27: a past state's
	// ~10k trees, scattered over a month's pack, mostly deltas)
	var (
		baseOff int64         // an OFS_DELTA's base
		baseRef plumbing.Hash // a REF_DELTA's
	)
	switch typ {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	case plumbing.OFSDeltaObject:
		c, err := r.ReadByte()
		rel := int64(c & 0x7f)
		for err == nil && c&0x80 != 0 {
			c, err = r.ReadByte()
			rel = (rel+1)<<7 | int64(c&0x7f)
		}
		if err != nil || rel <= 0 || rel > off {
			return packed{}, fmt.Errorf("gitstate: %s at %d: bad delta base offset", p.name, off)
		}
		baseOff = off - rel
	case plumbing.REFDeltaObject:
		if _, err := io.ReadFull(r, baseRef[:]); err != nil {
			return packed{}, fmt.Errorf("gitstate: %s at %d: %w", p.name, off, err)
		}
	default:
		return packed{}, fmt.Errorf("gitstate: %s at %d: object type %d", p.name, off, typ)
	}
	data, err := o.inflate(r, size)
	if err != nil {
		return packed{}, fmt.Errorf("gitstate: %s at %d: %w", p.name, off, err)
	}
	v := packed{typ: typ, data: data}
	if typ.IsDelta() {
		var base packed
		if typ == plumbing.OFSDeltaObject {
			base, err = o.readAt(p, baseOff, depth+1)
		} else {
			bp, boff, ok := o.findPacked(baseRef)
			if !ok {
				return packed{}, fmt.Errorf("gitstate: %s at %d: delta base %s: %w", p.name, off, baseRef, plumbing.ErrObjectNotFound)
			}
			base, err = o.readAt(bp, boff, depth+1)
		}
		if err != nil {
			return packed{}, err
		}
		if v.data, err = packfile.PatchDelta(base.data, data); err != nil {
			return packed{}, fmt.Errorf("gitstate: %s at %d: %w", p.name, off, err)
		}
		v.typ = base.typ
	}
	o.remember(packKey{p, off}, v)
	return v, nil
}

// openPack opens p's .pack file if it is not open yet.
func (o *Objects) openPack(p *packFile) error {
	if p.f != nil {
		return nil
	}
	f, err := openRaw(p.dir+"/pack/"+p.name+".pack", syscall.O_RDONLY, 0)
	if err != nil {
		return err
	}
	p.f = f
	return nil
}

// inflate reads one zlib stream of size bytes once inflated.
func (o *Objects) inflate(r io.Reader, size uint64) ([]byte, error) {
	if size > 1<<40 {
		return nil, fmt.Errorf("object of %d bytes", size)
	}
	if o.zr == nil {
		zr, err := zlib.NewReader(r)
		if err != nil {
			return nil, err
		}
		o.zr = zr
	} else if err := o.zr.(zlib.Resetter).Reset(r, nil); err != nil {
		return nil, err
	}
	// the header's size is not trusted for the allocation (a corrupt one
	// may say a terabyte): the buffer grows with what inflates, and the
	// object is refused unless that is exactly size bytes
	// MinRead more: ReadFrom wants that much room before each read, the
	// one that finds the end included, and a buffer of exactly size bytes
	// was allocated again, twice as big, for every object
	var b bytes.Buffer
	b.Grow(int(min(size, inflateGrowMax)) + bytes.MinRead)
	n, err := b.ReadFrom(io.LimitReader(o.zr, int64(size)+1))
	if err != nil {
		return nil, err
	}
	if uint64(n) != size {
		return nil, fmt.Errorf("object inflates to %d bytes, its header says %d", n, size)
	}
	return b.Bytes(), nil
}

// inflateGrowMax bounds what inflate allocates before it has read: past
// it, the buffer grows with the data.
const inflateGrowMax = 1 << 20

// readLoose reads "<objects>/xx/yyyy…". It returns an error matching
// fs.ErrNotExist when the object is not loose.
func readLoose(dir string, h plumbing.Hash) (packed, error) {
	s := h.String()
	b, err := readFileRaw(dir + "/" + s[:2] + "/" + s[2:])
	if err != nil {
		return packed{}, err
	}
	zr, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		return packed{}, fmt.Errorf("gitstate: loose object %s: %w", s, err)
	}
	defer zr.Close()
	all, err := io.ReadAll(zr)
	if err != nil {
		return packed{}, fmt.Errorf("gitstate: loose object %s: %w", s, err)
	}
	head, data, ok := bytes.Cut(all, []byte{0})
	typName, _, ok2 := bytes.Cut(head, []byte{' '})
	if !ok || !ok2 {
		return packed{}, fmt.Errorf("gitstate: loose object %s: bad header", s)
	}
	typ, err := plumbing.ParseObjectType(string(typName))
	if err != nil {
		return packed{}, fmt.Errorf("gitstate: loose object %s: %w", s, err)
	}
	return packed{typ: typ, data: data}, nil
}

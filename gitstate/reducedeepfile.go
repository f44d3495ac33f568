package gitstate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
)

// The deep file is binary, not JSON as <Name>.json is: it holds a part
// per directory (~22k for a month's mail at the retention default), and
// decoding them as JSON cost more than the page it serves. It is
//
//	deepMagic, uvarint len(Name), Name (with ".past" for the past
//	states' set, pastSet), uvarint count,
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

// deepName is the name a deep file of r's says it is of.
func deepName(r Reduction, past bool) string {
	if past {
		return r.Name + ".past"
	}
	return r.Name
}

func encodeDeep(r Reduction, past bool, parts map[string]keptPart) ([]byte, error) {
	dirs := make([]string, 0, len(parts))
	for dir := range parts {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs) // the same parts, the same bytes
	// each part's bytes first, then the file at its size: parts made
	// afresh (a past state's ~10k directories) have no size to guess from,
	// and growing the buffer as it went was a third of the write
	// (bytes read from the file, most of them in a process that read one,
	// are written as they are)
	type encoded struct{ part, recs []byte }
	enc := make([]encoded, len(dirs))
	size := len(deepMagic) + len(r.Name) + 24
	for i, dir := range dirs {
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
		enc[i] = encoded{data, recs}
		size += len(dir) + len(p.tree) + len(data) + len(recs) + 3*binary.MaxVarintLen64
	}
	b := make([]byte, 0, size)
	b = append(b, deepMagic...)
	putBytes := func(s []byte) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	putBytes([]byte(deepName(r, past)))
	b = binary.AppendUvarint(b, uint64(len(dirs)))
	for i, dir := range dirs {
		tree := parts[dir].tree
		b = binary.AppendUvarint(b, uint64(len(dir)))
		b = append(b, dir...)
		b = append(b, tree[:]...)
		putBytes(enc[i].part)
		putBytes(enc[i].recs)
	}
	return binary.BigEndian.AppendUint32(b, deepSum(b)), nil
}

func decodeDeep(r Reduction, past bool, data []byte) (map[string]keptPart, error) {
	if len(data) < len(deepMagic)+4 {
		return nil, errDeepFile
	}
	body, sum := data[:len(data)-4], data[len(data)-4:]
	if deepSum(body) != binary.BigEndian.Uint32(sum) || !bytes.HasPrefix(body, []byte(deepMagic)) {
		return nil, errDeepFile
	}
	d := deepReader{b: body[len(deepMagic):]}
	if name := d.bytes(); string(name) != deepName(r, past) {
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

func encodeRecords(r Reduction, v any) ([]byte, error) {
	switch v := v.(type) {
	case keptBytes:
		return v, nil
	case []keptRecord:
		b := binary.AppendUvarint(make([]byte, 0, len(v)*96), uint64(len(v)))
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

package gitrepo

import (
	"bytes"
	"encoding/binary"
	"hash/adler32"
	"math/bits"
)

// The compressor of the objects over storeMax: a zlib stream of one
// deflate block with the fixed Huffman codes (RFC 1951, 3.2.6), its
// matches found greedily through a small hash table, as git's readers and
// any inflater read it.
//
// Why not compress/zlib: a compress/flate writer is 1.2 MB whatever its
// level (the compressor's hash chains are arrays of 640 KB in the struct,
// BestSpeed adds 200 KB of tables and 320 KB of window and tokens), made
// on the first object over storeMax and kept to be reused. A long-lived
// process (an agent's MCP server) made it once the repository held a tree
// over 1 KiB, and from then on its live heap was 1.2 MB larger and its
// heap goal twice that: the late step in its resident memory (issue 27,
// docs/PERFORMANCE.md). Making one per pack instead cost ~0.7-0.9 ms a
// write under load, in the writer's critical section. This one holds deflateTable
// (16 KiB) and, for the objects a transaction writes (records, trees of
// names and hashes, mail text), compresses a little less than BestSpeed's
// dynamic codes and as fast.

// deflateHashBits sizes the table of the last position of each 4-byte
// hash: 4,096 entries, enough for objects of tens of KB.
const deflateHashBits = 12

// deflateTable is the compressor's only state, reused object to object.
type deflateTable [1 << deflateHashBits]int32

// deflateWindow is the farthest a match may look back (deflate's window).
const deflateWindow = 32 << 10

// The fixed code's length and distance symbols: their base values and the
// extra bits that follow them (RFC 1951, 3.2.5), lengths from symbol 257.
var (
	lengthBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase    = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra   = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
)

// deflateMaxMatch is deflate's longest match; 4 bytes is the shortest
// this compressor looks for (one hash).
const deflateMaxMatch = 258

// writeDeflated appends data to b as a zlib stream, compressed with t.
func writeDeflated(b *bytes.Buffer, t *deflateTable, data []byte) {
	clear(t[:])
	b.Write([]byte{0x78, 0x01}) // deflate, 32 KiB window, no dictionary, check bits
	w := bitWriter{out: b}
	w.put(1|1<<1, 3) // the final block, fixed Huffman codes (BTYPE 01)
	for i := 0; i < len(data); {
		if i+4 > len(data) {
			w.literal(int(data[i]))
			i++
			continue
		}
		h := deflateHash(data[i:])
		cand := int(t[h]) - 1 // the table holds positions plus one: 0 is empty
		t[h] = int32(i + 1)
		if cand < 0 || i-cand > deflateWindow || binary.LittleEndian.Uint32(data[cand:]) != binary.LittleEndian.Uint32(data[i:]) {
			w.literal(int(data[i]))
			i++
			continue
		}
		n := matchLen(data[cand+4:], data[i+4:min(len(data), i+deflateMaxMatch)]) + 4
		w.match(n, i-cand)
		// a few positions inside the match, and its last, for the
		// matches after it (all of them would double the time on text
		// that repeats, for little)
		for _, j := range [...]int{i + 1, i + 2, i + 3, i + n - 1} {
			if j < i+n && j+4 <= len(data) {
				t[deflateHash(data[j:])] = int32(j + 1)
			}
		}
		i += n
	}
	w.literal(256) // end of block
	w.flush()
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], adler32.Checksum(data))
	b.Write(sum[:])
}

// matchLen is how many bytes at the start of b equal a's (len(a) >= len(b)),
// compared 8 at a time.
func matchLen(a, b []byte) int {
	n := 0
	for len(b)-n >= 8 {
		if x := binary.LittleEndian.Uint64(a[n:]) ^ binary.LittleEndian.Uint64(b[n:]); x != 0 {
			return n + bits.TrailingZeros64(x)/8
		}
		n += 8
	}
	for n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// deflateHash hashes the 4 bytes at the start of p.
func deflateHash(p []byte) uint32 {
	return binary.LittleEndian.Uint32(p) * 2654435761 >> (32 - deflateHashBits)
}

// bitWriter writes deflate's bit stream: values least significant bit
// first, Huffman codes most significant bit first.
type bitWriter struct {
	out *bytes.Buffer
	acc uint64
	n   uint
}

func (w *bitWriter) put(v uint64, n uint) {
	w.acc |= v << w.n
	w.n += n
	for w.n >= 8 {
		w.out.WriteByte(byte(w.acc))
		w.acc >>= 8
		w.n -= 8
	}
}

// code writes a Huffman code of n bits.
func (w *bitWriter) code(c uint16, n uint) {
	w.put(uint64(bits.Reverse16(c)>>(16-n)), n)
}

// literal writes symbol s of the fixed literal/length code.
func (w *bitWriter) literal(s int) {
	switch {
	case s < 144:
		w.code(uint16(0x30+s), 8)
	case s < 256:
		w.code(uint16(0x190+s-144), 9)
	case s < 280:
		w.code(uint16(s-256), 7)
	default:
		w.code(uint16(0xc0+s-280), 8)
	}
}

// match writes a match of n bytes (3-258) at distance d (1-32768).
func (w *bitWriter) match(n, d int) {
	l := len(lengthBase) - 1
	for int(lengthBase[l]) > n {
		l--
	}
	w.literal(257 + l)
	w.put(uint64(n-int(lengthBase[l])), uint(lengthExtra[l]))
	c := len(distBase) - 1
	for int(distBase[c]) > d {
		c--
	}
	w.code(uint16(c), 5)
	w.put(uint64(d-int(distBase[c])), uint(distExtra[c]))
}

// flush writes the last bits, padded to a byte.
func (w *bitWriter) flush() {
	if w.n > 0 {
		w.out.WriteByte(byte(w.acc))
		w.acc, w.n = 0, 0
	}
}

package gitrepo

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// deflateInputs are what writeDeflated must round-trip: random bytes
// (nothing matches), runs (matches of 258 at distance 1), records and
// trees as the store writes them, a repeat exactly at the window's edge
// and one just past it, and sizes around the hash's 4 bytes.
func deflateInputs() map[string][]byte {
	r := rand.New(rand.NewPCG(3, 4))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return b
	}
	// 300 random bytes, zeros (which leave the head's hashes in the
	// table), and the 300 bytes again, gap bytes after the first
	edge := func(gap int) []byte {
		head := random(300)
		return append(append(append([]byte{}, head...), make([]byte, gap-len(head))...), head...)
	}
	in := map[string][]byte{
		"empty":        {},
		"one":          {'x'},
		"three":        []byte("abc"),
		"four":         []byte("abcd"),
		"eight":        []byte("abcdabcd"),
		"random":       random(5000),
		"zeros":        make([]byte, 100_000),
		"records":      bytes.Repeat([]byte(`{"id":"m-01jd3k4x5y","to":"boss","subject":"status","body":"still working on the parser"}`+"\n"), 500),
		"tree":         treeLike(r, 400),
		"window edge":  edge(deflateWindow),
		"past window":  edge(deflateWindow + 1),
		"long random":  random(200_000),
		"every length": nil,
	}
	// a match of every length 3..300 after a random separator
	var b bytes.Buffer
	for n := 3; n <= 300; n++ {
		b.Write(random(5))
		b.Write(bytes.Repeat([]byte{'q'}, n))
	}
	in["every length"] = b.Bytes()
	return in
}

// treeLike is a git tree of n entries named as the store names records
// (time-ordered ids: long shared prefixes) with random hashes.
func treeLike(r *rand.Rand, n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "100644 m-01jd3k%06d%04x.json\x00", i, r.IntN(1<<16))
		var h [20]byte
		for j := range h {
			h[j] = byte(r.IntN(256))
		}
		b.Write(h[:])
	}
	return b.Bytes()
}

func inflate(t testing.TB, z []byte) []byte {
	t.Helper()
	zr, err := zlib.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestWriteDeflated: what the compressor writes inflates (zlib's
// checksum included) to what went in, reusing one table throughout.
func TestWriteDeflated(t *testing.T) {
	var tab deflateTable
	size := map[string]int{}
	for name, data := range deflateInputs() {
		var b bytes.Buffer
		writeDeflated(&b, &tab, data)
		size[name] = b.Len()
		if got := inflate(t, b.Bytes()); !bytes.Equal(got, data) {
			t.Errorf("%s (%d bytes): inflated to %d different bytes", name, len(data), len(got))
		}
		if name == "zeros" || name == "records" || name == "tree" {
			// compressed, not merely coded
			if b.Len() >= len(data)*9/10 {
				t.Errorf("%s: %d bytes compressed to %d", name, len(data), b.Len())
			}
		}
	}
	// the repeat at the window's edge is a match, the one past it is not
	if size["window edge"]+200 > size["past window"] {
		t.Errorf("a repeat 32 KiB back compressed to %d bytes, 32 KiB + 1 back to %d: one of them was (not) matched", size["window edge"], size["past window"])
	}
}

// FuzzWriteDeflated: any input round-trips.
func FuzzWriteDeflated(f *testing.F) {
	for _, data := range deflateInputs() {
		if len(data) < 10_000 {
			f.Add(data)
		}
	}
	var tab deflateTable
	f.Fuzz(func(t *testing.T, data []byte) {
		var b bytes.Buffer
		writeDeflated(&b, &tab, data)
		if got := inflate(t, b.Bytes()); !bytes.Equal(got, data) {
			t.Fatalf("%d bytes inflated to %d different bytes", len(data), len(got))
		}
	})
}

// TestWriterHoldsNoCompressor is the bound of what a long-lived writer
// holds to compress (issue 27): after packs with objects over storeMax,
// an Objects holds less than 64 KiB more than before it wrote them (it
// held compress/zlib's 1.2 MB writer), and git reads the objects back.
func TestWriterHoldsNoCompressor(t *testing.T) {
	dir := t.TempDir()
	objects := filepath.Join(dir, "objects")
	if err := os.MkdirAll(filepath.Join(objects, "pack"), 0o777); err != nil {
		t.Fatal(err)
	}
	o := &Objects{dir: objects, phase: func(string) {}}
	if err := o.scan(); err != nil {
		t.Fatal(err)
	}
	live := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	r := rand.New(rand.NewPCG(5, 6))
	before := live()
	var want []plumbing.Hash
	for i := range 20 {
		var b objectBatch
		want = append(want, b.add(plumbing.TreeObject, treeLike(r, 30+i)))
		b.add(plumbing.BlobObject, []byte(strings.Repeat("a mail body ", 100+i)))
		if err := o.Write(&b); err != nil {
			t.Fatal(err)
		}
		o.keeps = nil // no writer lock here: the .keep files stay, harmless
	}
	after := live()
	if grown := int64(after) - int64(before); grown > 64<<10 {
		t.Errorf("an Objects that wrote 20 packs holds %d KiB more", grown>>10)
	}
	for _, h := range want {
		v, err := o.read(plumbing.TreeObject, h)
		if err != nil {
			t.Fatal(err)
		}
		if sha1.Sum(append([]byte(fmt.Sprintf("tree %d\x00", len(v.data))), v.data...)) != h {
			t.Errorf("tree %s read back different", h)
		}
	}
	runtime.KeepAlive(o)
}

// BenchmarkDeflate compares the compressor with compress/zlib's BestSpeed
// (reused, as the store used it) on a tree of 400 records and on mail
// text: time, and the compressed size as a share of the input's.
func BenchmarkDeflate(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	inputs := map[string][]byte{
		"tree": treeLike(r, 400),
		"text": bytes.Repeat([]byte("still working on the parser; the tests of the lexer pass, the grammar's left recursion is next.\n"), 40),
	}
	for name, data := range inputs {
		b.Run(name+"/fixed", func(b *testing.B) {
			var tab deflateTable
			var out bytes.Buffer
			for b.Loop() {
				out.Reset()
				writeDeflated(&out, &tab, data)
			}
			b.ReportMetric(float64(out.Len())/float64(len(data)), "ratio")
		})
		b.Run(name+"/zlib-bestspeed", func(b *testing.B) {
			zw, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
			var out bytes.Buffer
			for b.Loop() {
				out.Reset()
				zw.Reset(&out)
				zw.Write(data)
				zw.Close()
			}
			b.ReportMetric(float64(out.Len())/float64(len(data)), "ratio")
		})
	}
}

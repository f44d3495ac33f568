package gitrepo

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// bigPackRepo is a repository holding n small blobs in one pack that git
// wrote (fast-import, then index-pack with indexArgs, e.g. an offset
// above which every object goes to the 64-bit offset table), and the
// blobs' contents by hash.
func bigPackRepo(t testing.TB, n int, indexArgs ...string) (string, map[plumbing.Hash][]byte) {
	t.Helper()
	dir := t.TempDir()
	git := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("", "init", "-q")
	var s strings.Builder
	blobs := make(map[plumbing.Hash][]byte, n)
	for i := range n {
		data := []byte(fmt.Sprintf("blob %d of a pack whose index is read a block at a time\n", i))
		fmt.Fprintf(&s, "blob\ndata %d\n%s\n", len(data), data)
		blobs[plumbing.ComputeHash(plumbing.BlobObject, data)] = data
	}
	git(s.String(), "fast-import", "--quiet")
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("fast-import wrote %d packs", len(packs))
	}
	if len(indexArgs) > 0 {
		idx := strings.TrimSuffix(packs[0], ".pack") + ".idx"
		os.Remove(idx)
		git("", append(append([]string{"index-pack"}, indexArgs...), "-o", idx, packs[0])...)
	}
	return filepath.Join(dir, ".git"), blobs
}

// TestBigIndexReadThroughCache: an index over readIndexMax is neither
// mapped nor read whole but read a block at a time through the bounded
// cache, and every object is found and read as git wrote it, missing ones
// are missing, with offsets in the 32-bit table or the 64-bit one, and with
// a cache so small that every lookup evicts (names straddling blocks
// included).
func TestBigIndexReadThroughCache(t *testing.T) {
	for _, c := range []struct {
		name      string
		limit     int
		indexArgs []string
	}{
		{"default cache", 0, nil},
		{"three blocks", 3, nil},
		{"64-bit offsets, three blocks", 3, []string{"--index-version=2,0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			common, blobs := bigPackRepo(t, 12000, c.indexArgs...)
			r := Open(common, t.TempDir())
			defer r.Close()
			r.ixc.limit = c.limit
			hashes := make([]plumbing.Hash, 0, len(blobs))
			for h := range blobs {
				hashes = append(hashes, h)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			for round := range 2 {
				rng.Shuffle(len(hashes), func(i, j int) { hashes[i], hashes[j] = hashes[j], hashes[i] })
				for _, h := range hashes {
					got, err := r.Blob(h)
					if err != nil {
						t.Fatalf("round %d: %s: %v", round, h, err)
					}
					if string(got) != string(blobs[h]) {
						t.Fatalf("round %d: %s read as %q, want %q", round, h, got, blobs[h])
					}
				}
			}
			if len(r.packs) != 1 || r.packs[0].ixf == nil || r.packs[0].idx != nil {
				t.Fatalf("the index of %d objects was not read through the cache", len(blobs))
			}
			limit := c.limit
			if limit == 0 {
				limit = indexCacheBlocks
			}
			if n := r.ixc.cachedBlocks(); n == 0 || n > limit {
				t.Errorf("%d blocks cached, want 1..%d", n, limit)
			}
			maps, err := os.ReadFile("/proc/self/maps")
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(maps), ".idx") {
				t.Errorf("an index is mapped:\n%s", maps)
			}
			for i := range 50 {
				h := plumbing.ComputeHash(plumbing.BlobObject, []byte(fmt.Sprintf("not in the pack %d", i)))
				if _, err := r.Blob(h); !errors.Is(err, ErrObjectMissing) {
					t.Fatalf("%s, not in the repository: %v", h, err)
				}
			}
			// closing the pack (as a scan does when git deleted it)
			// gives its blocks back
			r.Close()
			if n := r.ixc.cachedBlocks(); n != 0 {
				t.Errorf("%d blocks cached after close", n)
			}
		})
	}
}

// BenchmarkBigIndexLookup is a lookup in a pack of 40,000 objects (an
// index of 1.1 MB, read through the cache): over every object in turn (the
// cache misses most of the time), and over the same 100 (a call's reads of
// the tip: it hits).
func BenchmarkBigIndexLookup(b *testing.B) {
	common, blobs := bigPackRepo(b, 40000)
	r := Open(common, b.TempDir())
	defer r.Close()
	hashes := make([]plumbing.Hash, 0, len(blobs))
	for h := range blobs {
		hashes = append(hashes, h)
	}
	if _, err := r.Blob(hashes[0]); err != nil {
		b.Fatal(err)
	}
	p := r.packs[0]
	for _, c := range []struct {
		name string
		n    int
	}{{"all", len(hashes)}, {"same-100", 100}} {
		b.Run(c.name, func(b *testing.B) {
			for i := range b.N {
				if _, ok := p.find(hashes[i%c.n]); !ok {
					b.Fatal("not found")
				}
			}
		})
	}
}

// TestWidenIndexCache: widened for a batch, a big index is mapped whole
// at its first lookup, whether it was open before or opened meanwhile,
// and no block of it is cached; restore unmaps it, and lookups read it a block at a time again
// within the usual bound, every object still found. Where mapping fails,
// the widened cache holds more blocks than the usual bound instead; a
// limit a test set is left alone.
func TestWidenIndexCache(t *testing.T) {
	common, blobs := bigPackRepo(t, 25000) // an index of ~690 blocks
	r := Open(common, t.TempDir())
	defer r.Close()
	readAll := func(what string) {
		t.Helper()
		for h, want := range blobs {
			got, err := r.Blob(h)
			if err != nil || string(got) != string(want) {
				t.Fatalf("%s: %s: %q, %v", what, h, got, err)
			}
		}
	}
	mapped := func(what string, want bool) {
		t.Helper()
		p := r.packs[0]
		if p.mapped != want || (p.idx != nil) != want || p.ixf == nil {
			t.Errorf("%s: mapped %v (idx %d bytes, file open %v), want mapped %v", what, p.mapped, len(p.idx), p.ixf != nil, want)
		}
	}
	// open before the batch: mapped when widened
	readAll("before")
	mapped("before", false)
	if n := r.ixc.cachedBlocks(); n == 0 {
		t.Errorf("before: no block cached")
	}
	restore := r.WidenIndexCache(600)
	mapped("widened, before a lookup", false)
	readAll("widened")
	mapped("widened", true)
	if n := r.ixc.cachedBlocks(); n != 0 {
		t.Errorf("widened, after reading: %d blocks cached", n)
	}
	restore()
	mapped("restored", false)
	readAll("restored")
	if n := r.ixc.cachedBlocks(); n == 0 || n > indexCacheBlocks || len(r.ixc.slots) > indexCacheBlocks {
		t.Errorf("restored, after reading: %d blocks cached in %d slots, want 1..%d", n, len(r.ixc.slots), indexCacheBlocks)
	}

	// opened during the batch: mapped as it opens, unmapped by restore;
	// a second batch begun meanwhile (another goroutine's, taking turns)
	// leaves it to the first's restore
	r.Close()
	r = Open(common, t.TempDir())
	restore = r.WidenIndexCache(600)
	readAll("opened widened")
	mapped("opened widened", true)
	inner := r.WidenIndexCache(600)
	inner()
	mapped("a second batch's restore", true)
	readAll("after a second batch's restore")
	restore()
	mapped("opened widened, restored", false)
	readAll("opened widened, restored")

	// where mapping fails: more blocks than the usual bound, until restore
	r.Close()
	r = Open(common, t.TempDir())
	r.ixc.noMap = true
	restore = r.WidenIndexCache(600)
	readAll("widened, not mapped")
	mapped("widened, not mapped", false)
	if n := r.ixc.cachedBlocks(); n <= indexCacheBlocks {
		t.Errorf("widened, not mapped: %d blocks cached, want up to 600 of the index's ~690", n)
	}
	restore()
	if n := r.ixc.cachedBlocks(); n == 0 || n > indexCacheBlocks || len(r.ixc.slots) > indexCacheBlocks {
		t.Errorf("restored: %d blocks cached in %d slots, want 1..%d", n, len(r.ixc.slots), indexCacheBlocks)
	}
	readAll("not mapped, restored")

	r.Close() // (idempotent: the deferred Close finds nothing open)
	r = Open(common, t.TempDir())
	defer r.Close()
	r.ixc.limit = 3
	restore = r.WidenIndexCache(4096)
	readAll("a test's limit")
	if n := r.ixc.cachedBlocks(); n > 3 {
		t.Errorf("a test's limit of 3 widened: %d blocks cached", n)
	}
	restore()
	if r.ixc.limit != 3 {
		t.Errorf("limit %d after restore, want the test's 3", r.ixc.limit)
	}
}

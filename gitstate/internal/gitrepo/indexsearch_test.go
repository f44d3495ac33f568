package gitrepo

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestBigIndexLookupReadsFewBlocks: a lookup in a big index starts from
// the name's expected place in its fan-out bucket (packFile.bracket), so a
// cold lookup in a pack of 40,000 objects reads ~2.1 blocks (names, then
// the offset), where halving its buckets of ~160 names read ~3.0, and a
// million objects' ~4,000 names ~7.5; every object is
// still found (3,000 of them, in a cold cache each time), and names that are not there are not.
func TestBigIndexLookupReadsFewBlocks(t *testing.T) {
	const n = 40000
	common, blobs := bigPackRepo(t, n)
	r := Open(common, t.TempDir())
	defer r.Close()
	looked, blocks := 0, 0
	for h, want := range blobs {
		if looked == 3000 {
			break
		}
		r.ixc.slots, r.ixc.where, r.ixc.hand, r.ixc.last = nil, nil, 0, 0 // cold
		got, err := r.Blob(h)
		if err != nil {
			t.Fatalf("%s: %v", h, err)
		}
		if string(got) != string(want) {
			t.Fatalf("%s read as %q, want %q", h, got, want)
		}
		looked++
		blocks += r.ixc.cachedBlocks()
	}
	if len(r.packs) != 1 || r.packs[0].ixf == nil {
		t.Fatalf("the index of %d objects was not read through the cache", n)
	}
	mean := float64(blocks) / float64(looked)
	t.Logf("%.2f blocks read per cold lookup in an index of %d objects", mean, n)
	if mean > 2.5 {
		t.Errorf("a cold lookup read %.2f blocks of the index, want at most 2.5", mean)
	}
	for i := range 2000 {
		h := plumbing.ComputeHash(plumbing.BlobObject, []byte(fmt.Sprintf("not in the pack %d", i)))
		if _, err := r.Blob(h); !errors.Is(err, ErrObjectMissing) {
			t.Fatalf("%s, not in the repository: %v", h, err)
		}
	}
}

package gitrepo

import (
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestObjectCacheAges: objects one operation reads stay cached through
// that operation, however many; those no operation read in the last
// cacheAgeOps are dropped, and those read every operation stay.
func TestObjectCacheAges(t *testing.T) {
	common, blobs := bigPackRepo(t, 500)
	r := Open(common, t.TempDir())
	defer r.Close()
	var hot plumbing.Hash
	r.Age()
	for h := range blobs {
		if _, err := r.Blob(h); err != nil {
			t.Fatal(err)
		}
		hot = h
	}
	all := 0
	for _, b := range blobs {
		all += len(b)
	}
	if got := r.cachedBytes(); got != all {
		t.Fatalf("after one operation read every object: %d bytes cached, want %d", got, all)
	}
	for range 2 * cacheAgeOps {
		r.Age()
		if _, err := r.Blob(hot); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := r.cachedBytes(), len(blobs[hot]); got != want || len(r.cache) != 1 {
		t.Fatalf("after %d operations that read one object: %d objects, %d bytes cached, want 1, %d", 2*cacheAgeOps, len(r.cache), got, want)
	}
}

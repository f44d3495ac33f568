package gitrepo

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestHasReadsNoObject: Has answers from where an object is listed, as
// git's has_object does: packed and loose objects are found without a
// byte of them inflated (nothing cached, the pack window empty), a pack
// deleted since its index was read counts as gone, one moved to another
// pack is found there, and what is nowhere is ErrObjectMissing.
func TestHasReadsNoObject(t *testing.T) {
	common, blobs := bigPackRepo(t, 150)
	cmd := exec.Command("git", "--git-dir", common, "hash-object", "-w", "--stdin")
	cmd.Stdin = strings.NewReader("a loose blob\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	loose := plumbing.NewHash(strings.TrimSpace(string(out)))

	r := Open(common, t.TempDir())
	defer r.Close()
	r.Age()
	for h := range blobs {
		if err := r.Has(h); err != nil {
			t.Fatalf("has %s: %v", h, err)
		}
	}
	if err := r.Has(loose); err != nil {
		t.Fatalf("has the loose %s: %v", loose, err)
	}
	if n := r.cachedBytes(); n != 0 || len(r.cache) != 0 {
		t.Errorf("Has read %d objects (%d bytes) into the cache", len(r.cache), n)
	}
	if r.win.p != nil {
		t.Errorf("Has read the pack's bytes into the window")
	}
	if len(r.packs) != 1 || r.packs[0].f == nil {
		t.Fatalf("the pack of the objects found is not open: %+v", r.packs)
	}
	missing := plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")
	if err := r.Has(missing); !errors.Is(err, ErrObjectMissing) {
		t.Errorf("has a missing object: %v, want ErrObjectMissing", err)
	}

	// the pack moves under another name (a repack that rolled it up):
	// found there, once the listing is read again
	pack := filepath.Join(common, "objects", "pack")
	old, _ := filepath.Glob(filepath.Join(pack, "pack-*.idx"))
	if len(old) != 1 {
		t.Fatalf("%d indexes", len(old))
	}
	oldName := strings.TrimSuffix(old[0], ".idx")
	r.Close() // forgets the open pack, as a process that never read it
	if err := r.scan(); err != nil {
		t.Fatal(err)
	}
	for h := range blobs { // the index is read, the pack not opened
		if _, _, ok := r.findPacked(h); !ok {
			t.Fatalf("%s not in the index", h)
		}
		break
	}
	moved := filepath.Join(pack, "pack-0000000000000000000000000000000000000001")
	for _, ext := range []string{".pack", ".idx"} {
		if err := os.Rename(oldName+ext, moved+ext); err != nil {
			t.Fatal(err)
		}
	}
	for h := range blobs {
		if err := r.Has(h); err != nil {
			t.Fatalf("has %s after its pack moved: %v", h, err)
		}
	}

	// the pack is deleted after its index was read, before it was
	// opened (pruned beside this process): its objects are gone
	r.Close()
	if err := r.scan(); err != nil {
		t.Fatal(err)
	}
	for h := range blobs {
		if _, _, ok := r.findPacked(h); !ok {
			t.Fatalf("%s not in the index", h)
		}
		break
	}
	for _, ext := range []string{".pack", ".idx"} {
		if err := os.Remove(moved + ext); err != nil {
			t.Fatal(err)
		}
	}
	for h := range blobs {
		if err := r.Has(h); !errors.Is(err, ErrObjectMissing) {
			t.Fatalf("has %s of a deleted pack: %v, want ErrObjectMissing", h, err)
		}
	}
	if err := r.Has(loose); err != nil {
		t.Fatalf("has the loose %s: %v", loose, err)
	}
}

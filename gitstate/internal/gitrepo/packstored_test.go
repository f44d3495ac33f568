package gitrepo

import (
	"bytes"
	"compress/zlib"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestWriteStored: the stored zlib streams small objects are written as
// decode to what went in, at the sizes around a stored block's limit.
func TestWriteStored(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 1024, 0xffff, 0x10000, 0x10001, 3*0xffff + 7} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(r.IntN(256))
		}
		var b bytes.Buffer
		writeStored(&b, data)
		zr, err := zlib.NewReader(&b)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		got, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: decoded %d different bytes", n, len(got))
		}
	}
}

// TestPackOfStoredAndCompressedObjects: git verifies a pack that holds
// objects both stored and compressed, and reads each back as written.
func TestPackOfStoredAndCompressedObjects(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	var b objectBatch
	want := map[plumbing.Hash][]byte{}
	for _, n := range []int{0, 10, storeMax, storeMax + 1, 100_000} {
		data := bytes.Repeat([]byte("record "), n/7+1)[:n]
		want[b.add(plumbing.BlobObject, data)] = data
	}
	name, _, err := writePack(new(deflateTable), filepath.Join(dir, ".git", "objects"), "", b.objs, fsyncPolicy{pack: true, packMetadata: true}, 0, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	git("verify-pack", filepath.Join(".git", "objects", "pack", name+".idx"))
	for h, data := range want {
		cmd := exec.Command("git", "cat-file", "blob", h.String())
		cmd.Dir = dir
		got, err := cmd.Output()
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("blob of %d bytes read back as %d bytes (%v)", len(data), len(got), err)
		}
	}
	git("fsck", "--strict", "--no-dangling")
	if _, err := os.Stat(filepath.Join(dir, ".git", "objects", "pack", name+".pack")); err != nil {
		t.Fatal(err)
	}
}

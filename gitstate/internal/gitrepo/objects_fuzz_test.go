package gitrepo

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// Fuzz targets for the codecs that read what git wrote: pack indexes,
// pack entries, trees and commits. Whatever the bytes, decoding returns
// an error rather than panic, loop or allocate what the bytes merely
// claim; what decodes re-encodes to something that decodes the same.
// Their seeds are objects and files git itself wrote.

// gitWrote makes a repository with a few commits, a packed history and a
// version 1 index beside a version 2 one, and returns its pack files'
// bytes (.idx v2, .idx v1, .pack) and a tree and a commit as git wrote
// them.
func gitWrote(f *testing.F) (idx2, idx1, pack, tree, commit []byte) {
	f.Helper()
	dir := f.TempDir()
	git := func(args ...string) []byte {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=A U Thor", "GIT_AUTHOR_EMAIL=a@example.com",
			"GIT_COMMITTER_NAME=C O Mitter", "GIT_COMMITTER_EMAIL=c@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			f.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	git("init", "-q")
	for i, body := range []string{"one\n", "one\ntwo\n", "one\ntwo\nthree\n"} {
		os.MkdirAll(filepath.Join(dir, "d"), 0o755)
		os.WriteFile(filepath.Join(dir, "d", "f.txt"), []byte(body), 0o644)
		os.WriteFile(filepath.Join(dir, "x"), []byte{byte(i)}, 0o755)
		git("add", "-A")
		git("commit", "-q", "-m", "c"+string(rune('0'+i))+"\n\nCodex-Tool: t\n")
	}
	git("repack", "-adq")
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		f.Fatalf("want one pack, have %v", packs)
	}
	base := strings.TrimSuffix(packs[0], ".pack")
	idx2, _ = os.ReadFile(base + ".idx")
	pack, _ = os.ReadFile(base + ".pack")
	git("index-pack", "--index-version=1", "-o", filepath.Join(dir, "v1.idx"), base+".pack")
	idx1, _ = os.ReadFile(filepath.Join(dir, "v1.idx"))
	tree = git("cat-file", "tree", "HEAD^{tree}")
	commit = git("cat-file", "commit", "HEAD")
	return idx2, idx1, pack, tree, commit
}

// FuzzPackIndex opens any bytes as a pack's .idx and looks objects up.
func FuzzPackIndex(f *testing.F) {
	idx2, idx1, _, _, _ := gitWrote(f)
	f.Add(idx2, idx2[idxFanout:idxFanout+20])
	f.Add(idx1, idx1[256*4+4:256*4+24])
	f.Add(idx2[:len(idx2)/2], make([]byte, 20))
	f.Add([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 3}, []byte("01234567890123456789"))
	f.Fuzz(func(t *testing.T, idx, want []byte) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "pack"), 0o755)
		if err := os.WriteFile(filepath.Join(dir, "pack", "pack-x.idx"), idx, 0o644); err != nil {
			t.Fatal(err)
		}
		p := &packFile{dir: dir, name: "pack-x"}
		defer p.close()
		if err := p.openIndex(); err != nil {
			return
		}
		var h plumbing.Hash
		copy(h[:], want)
		p.find(h)
		for i := range min(p.count, 64) {
			p.offset(i)
			var named plumbing.Hash
			if b, err := p.at(idxFanout+20*i, named[:]); err == nil {
				copy(named[:], b)
				p.find(named)
			}
		}
	})
}

// FuzzPackEntry reads an object at any offset of any bytes as a pack,
// resolving offset deltas within it.
func FuzzPackEntry(f *testing.F) {
	idx2, _, pack, _, _ := gitWrote(f)
	p := &packFile{dir: "", name: "seed", idx: idx2, count: countFromIndexSize(int64(len(idx2)))}
	for i := range p.count {
		f.Add(pack, p.offset(i))
	}
	f.Add(pack[:len(pack)/2], int64(12))
	f.Add([]byte("PACK\x00\x00\x00\x02\x00\x00\x00\x01\xff\xff\xff\xff\xff\xff\xff\x7f"), int64(12))
	f.Fuzz(func(t *testing.T, data []byte, off int64) {
		if off < 0 || off >= int64(len(data)) {
			return
		}
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "pack"), 0o755)
		if err := os.WriteFile(filepath.Join(dir, "pack", "pack-x.pack"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		o := &Objects{dir: dir, scanned: true}
		p := &packFile{dir: dir, name: "pack-x"}
		defer p.close()
		v, err := o.readAt(p, off, 0)
		if err == nil && len(v.data) > 64*len(data)+1<<16 {
			// zlib inflates at most ~1032:1, a delta copies its base at most
			// a few times over: far more means a size was believed
			t.Fatalf("%d bytes of pack read as an object of %d bytes", len(data), len(v.data))
		}
	})
}

// FuzzDecodeTree decodes any bytes as a tree; what decodes and encodes
// decodes to the same entries.
func FuzzDecodeTree(f *testing.F) {
	_, _, _, tree, _ := gitWrote(f)
	f.Add(tree)
	f.Add([]byte("100644 a\x00" + strings.Repeat("\x01", 20) + "40000 d\x00" + strings.Repeat("\x02", 20)))
	f.Add([]byte("100664 odd mode\x00" + strings.Repeat("\x03", 19)))
	f.Add([]byte(" \x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := decodeTree(data)
		if err != nil {
			return
		}
		enc, err := tr.encode()
		if err != nil {
			return // names or order git would not write: fsck's business
		}
		again, err := decodeTree(enc)
		if err != nil {
			t.Fatalf("encoded tree does not decode: %v", err)
		}
		if !slices.Equal(again.Entries, tr.Entries) {
			t.Fatalf("round trip changed the entries:\n%v\n%v", tr.Entries, again.Entries)
		}
		if bytes.Equal(data, tree) && !bytes.Equal(enc, data) {
			t.Fatalf("git's tree re-encodes differently")
		}
	})
}

// FuzzDecodeCommit decodes any bytes as a commit; what decodes re-encodes
// to the same tree, parents and message, and a commit git wrote to the
// same bytes.
func FuzzDecodeCommit(f *testing.F) {
	_, _, _, _, commit := gitWrote(f)
	f.Add(commit)
	f.Add([]byte("tree " + strings.Repeat("a", 40) + "\nparent " + strings.Repeat("b", 40) + "\ngpgsig -----BEGIN\n continued\n -----END\n\nmsg"))
	f.Add([]byte("tree " + strings.Repeat("a", 40)))
	f.Add([]byte("author <> -1 +9999\ntree " + strings.Repeat("c", 40) + "\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := decodeCommit(data)
		if err != nil {
			return
		}
		enc, err := c.encode()
		if err != nil {
			t.Fatalf("decoded commit does not encode: %v", err)
		}
		again, err := decodeCommit(enc)
		if err != nil {
			t.Fatalf("encoded commit does not decode: %v\n%q", err, enc)
		}
		clean := func(s Signature) bool { return !strings.ContainsAny(s.Name+s.Email, "\n<>") }
		if clean(c.Author) && clean(c.Committer) {
			if again.TreeHash != c.TreeHash || !slices.Equal(again.ParentHashes, c.ParentHashes) || again.Message != c.Message {
				t.Fatalf("round trip changed the commit:\n%q\n%q", data, enc)
			}
		}
		if bytes.Equal(data, commit) && !bytes.Equal(enc, data) {
			t.Fatalf("git's commit re-encodes differently:\n%q\n%q", data, enc)
		}
	})
}

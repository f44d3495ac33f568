package gitrepo_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// The storage test suite, after go-git's storage/test: one set of checks,
// written against the Storage interface and run against a constructor, over
// repositories whose objects and refs git itself wrote in each of the
// layouts git uses (loose objects, the pack fast-import writes, repacked
// packs with offset and ref deltas, several packs under a multi-pack index,
// an alternate object directory, packed and loose refs), and over what the
// storage wrote itself, read back by git (cat-file, fsck --strict,
// verify-pack).

// openFunc opens the storage of the repository whose common git dir is
// commonDir.
type openFunc func(t *testing.T, commonDir string) gitrepo.Storage

// runStorageSuite runs every check of the suite against open.
func runStorageSuite(t *testing.T, open openFunc) {
	for _, l := range gitLayouts {
		t.Run("reads/"+l.name, func(t *testing.T) {
			src := gitstatetest.NewRepo(t)
			fastImport(t, src, history(0, 6))
			dir := l.make(t, src)
			checkReadsWhatGitWrote(t, dir, open(t, gitDirOf(dir)))
		})
	}
	t.Run("writes", func(t *testing.T) {
		checkGitReadsWhatWasWritten(t, open)
	})
}

// A layout turns src, a repository fast-import filled (one pack, loose
// refs), into a repository holding the same objects in one of git's
// layouts, and returns it.
type layout struct {
	name string
	make func(t *testing.T, src string) string
}

var gitLayouts = []layout{
	{"fast-import pack", func(t *testing.T, src string) string {
		if loose := gitstatetest.Git(t, src, "count-objects"); !strings.HasPrefix(loose, "0 objects") {
			t.Fatalf("fast-import left loose objects: %s", loose)
		}
		return src
	}},
	{"loose objects", func(t *testing.T, src string) string {
		dir := gitstatetest.NewRepo(t)
		unpackInto(t, src, dir)
		copyRefs(t, src, dir)
		if packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack")); len(packs) != 0 {
			t.Fatalf("the loose layout has packs: %v", packs)
		}
		return dir
	}},
	{"repacked, offset deltas, packed refs", func(t *testing.T, src string) string {
		gitstatetest.Git(t, src, "repack", "-a", "-d", "-f", "-q", "--window=50", "--depth=50")
		gitstatetest.Git(t, src, "pack-refs", "--all")
		// a ref both packed and loose: the loose one is the ref
		gitstatetest.Git(t, src, "update-ref", "refs/heads/side", "refs/heads/main~1")
		requireDeltas(t, src, "ofs-delta")
		return src
	}},
	{"repacked, ref deltas", func(t *testing.T, src string) string {
		gitstatetest.Git(t, src, "config", "repack.useDeltaBaseOffset", "false")
		gitstatetest.Git(t, src, "repack", "-a", "-d", "-f", "-q", "--window=50", "--depth=50")
		requireDeltas(t, src, "ref-delta")
		return src
	}},
	{"several packs and loose objects, multi-pack index", func(t *testing.T, src string) string {
		fastImport(t, src, history(6, 3)) // a second pack
		gitstatetest.Git(t, src, "multi-pack-index", "write")
		// and loose objects beside them
		blob := gitstatetest.WriteObject(t, src, "blob", []byte("loose beside the packs\n"))
		gitstatetest.Git(t, src, "update-ref", "refs/tags/loose-blob", blob)
		if _, err := os.Stat(filepath.Join(src, ".git", "objects", "pack", "multi-pack-index")); err != nil {
			t.Fatal(err)
		}
		return src
	}},
	{"alternates", func(t *testing.T, src string) string {
		dir := gitstatetest.NewRepo(t)
		alt := filepath.Join(dir, ".git", "objects", "info", "alternates")
		if err := os.WriteFile(alt, []byte(filepath.Join(src, ".git", "objects")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		copyRefs(t, src, dir)
		// an object of its own, on top of the alternate's
		blob := gitstatetest.WriteObject(t, dir, "blob", []byte("own object\n"))
		gitstatetest.Git(t, dir, "update-ref", "refs/tags/own", blob)
		return dir
	}},
}

// checkReadsWhatGitWrote reads every object and ref git lists in dir
// through st, and compares.
func checkReadsWhatGitWrote(t *testing.T, dir string, st gitrepo.Storage) {
	objs := allObjects(t, dir)
	if len(objs) < 20 {
		t.Fatalf("git lists only %d objects", len(objs))
	}
	kinds := map[plumbing.ObjectType]int{}
	for _, o := range objs {
		kinds[o.typ]++
		for pass := 0; pass < 2; pass++ { // the second read may come from a cache
			got, err := st.Read(o.typ, o.hash)
			if err != nil {
				t.Fatalf("read %s %s: %v", o.typ, o.hash, err)
			}
			if !bytes.Equal(got, o.data) {
				t.Fatalf("read %s %s: %d bytes differ from git's %d", o.typ, o.hash, len(got), len(o.data))
			}
		}
		if err := st.Has(o.hash); err != nil {
			t.Errorf("has %s: %v", o.hash, err)
		}
		other := plumbing.BlobObject
		if o.typ == plumbing.BlobObject {
			other = plumbing.TreeObject
		}
		if _, err := st.Read(other, o.hash); !errors.Is(err, gitrepo.ErrObjectMissing) {
			t.Errorf("read %s %s as a %s: %v, want ErrObjectMissing", o.typ, o.hash, other, err)
		}
	}
	for _, k := range []plumbing.ObjectType{plumbing.BlobObject, plumbing.TreeObject, plumbing.CommitObject, plumbing.TagObject} {
		if kinds[k] == 0 {
			t.Errorf("no %s among git's objects: the suite covers less than it says", k)
		}
	}
	missing := plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")
	if err := st.Has(missing); !errors.Is(err, gitrepo.ErrObjectMissing) {
		t.Errorf("has a missing object: %v, want ErrObjectMissing", err)
	}
	if _, err := st.Read(plumbing.BlobObject, missing); !errors.Is(err, gitrepo.ErrObjectMissing) {
		t.Errorf("read a missing object: %v, want ErrObjectMissing", err)
	}

	refs := strings.Split(gitstatetest.Git(t, dir, "for-each-ref", "--format=%(objectname) %(refname)"), "\n")
	if len(refs) < 3 {
		t.Fatalf("git lists only %d refs", len(refs))
	}
	for _, line := range refs {
		want, name, _ := strings.Cut(line, " ")
		h, ok, err := st.ReadRef(name)
		if err != nil || !ok || h.String() != want {
			t.Errorf("read ref %s: %s, %v, %v; git says %s", name, h, ok, err, want)
		}
	}
	if h, ok, err := st.ReadRef("refs/heads/no-such-branch"); ok || err != nil {
		t.Errorf("read a missing ref: %s, %v, %v", h, ok, err)
	}
}

// checkGitReadsWhatWasWritten writes blobs (empty, binary, large and
// compressible, large and random, one twice), a tree of them and a commit
// through a storage, then has git read them back and check them strictly,
// and reads them through a storage opened afresh.
func checkGitReadsWhatWasWritten(t *testing.T, open openFunc) {
	dir := gitstatetest.NewRepo(t)
	common := gitDirOf(dir)
	st := open(t, common)

	rnd := rand.New(rand.NewSource(26))
	random := make([]byte, 1<<20)
	rnd.Read(random)
	blobs := map[string][]byte{
		"empty":        {},
		"small.txt":    []byte("hello\n"),
		"binary":       []byte("\x00\x01\x02\xff\xfe\x00\n\r"),
		"compressible": bytes.Repeat([]byte("git codex keeps its state in git\n"), 20000),
		"random":       random,
	}
	var b gitrepo.Batch
	want := map[plumbing.Hash]written{}
	var entries []gitrepo.TreeEntry
	for name, data := range blobs {
		h := b.Add(plumbing.BlobObject, data)
		want[h] = written{plumbing.BlobObject, data}
		mode := filemode.Regular
		if name == "small.txt" {
			mode = filemode.Executable
		}
		entries = append(entries, gitrepo.TreeEntry{Name: name, Mode: mode, Hash: h})
	}
	if again := b.Add(plumbing.BlobObject, blobs["small.txt"]); want[again].typ != plumbing.BlobObject {
		t.Fatalf("the same blob added twice has another hash: %s", again)
	}
	sub := &gitrepo.Tree{Entries: []gitrepo.TreeEntry{{Name: "inner", Mode: filemode.Regular, Hash: entries[0].Hash}}}
	subHash, err := b.Encode(plumbing.TreeObject, sub)
	if err != nil {
		t.Fatal(err)
	}
	entries = append(entries, gitrepo.TreeEntry{Name: "dir", Mode: filemode.Dir, Hash: subHash})
	gitrepo.SortTreeEntries(entries)
	tree := &gitrepo.Tree{Entries: entries}
	treeHash, err := b.Encode(plumbing.TreeObject, tree)
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2026, 11, 26, 21, 40, 0, 0, time.FixedZone("", -(3*3600+30*60)))
	commit := &gitrepo.Commit{TreeHash: treeHash, Message: "written by the storage\n\nCodex-Tool: test\n",
		Author:    gitrepo.Signature{Name: "agent a-1", Email: "a-1@agents.git-codex.invalid", When: when},
		Committer: gitrepo.Signature{Name: "git codex", Email: "git-codex@localhost", When: when}}
	commitHash, err := b.Encode(plumbing.CommitObject, commit)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Write(&b); err != nil {
		t.Fatal(err)
	}
	if err := st.Write(&gitrepo.Batch{}); err != nil {
		t.Fatalf("write nothing: %v", err)
	}
	packs, _ := filepath.Glob(filepath.Join(common, "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("one batch wrote %d packs, want 1", len(packs))
	}

	// git reads every object as it was written
	for h, w := range want {
		if got := gitstatetest.Git(t, dir, "cat-file", "-t", h.String()); got != w.typ.String() {
			t.Errorf("git says %s is a %s, want %s", h, got, w.typ)
		}
		if got := catFileRaw(t, dir, w.typ.String(), h.String()); !bytes.Equal(got, w.data) {
			t.Errorf("git reads %s as %d bytes, %d written", h, len(got), len(w.data))
		}
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", commitHash.String()+"^{tree}"); got != treeHash.String() {
		t.Errorf("the commit's tree is %s, want %s", got, treeHash)
	}
	if got := gitstatetest.Git(t, dir, "log", "-1", "--format=%an|%ae|%aI|%s", commitHash.String()); got != "agent a-1|a-1@agents.git-codex.invalid|2026-11-26T21:40:00-03:30|written by the storage" {
		t.Errorf("git log of the commit: %s", got)
	}
	if got := gitstatetest.Git(t, dir, "ls-tree", "-r", "--name-only", commitHash.String()); got != "binary\ncompressible\ndir/inner\nempty\nrandom\nsmall.txt" {
		t.Errorf("git ls-tree of the commit:\n%s", got)
	}
	gitstatetest.Git(t, dir, "update-ref", "refs/codex/state", commitHash.String())
	gitstatetest.Git(t, dir, "update-ref", "refs/heads/main", commitHash.String())
	if out, err := gitstatetest.GitErr(dir, "fsck", "--strict", "--full", "--no-dangling"); err != nil || out != "" {
		t.Errorf("git fsck --strict: %v\n%s", err, out)
	}
	if out, err := gitstatetest.GitErr(dir, "verify-pack", "-v", strings.TrimSuffix(packs[0], ".pack")+".idx"); err != nil {
		t.Errorf("git verify-pack: %v\n%s", err, out)
	}

	// and so does a storage opened afresh, the ref included
	again := open(t, common)
	want[treeHash] = written{plumbing.TreeObject, catFileRaw(t, dir, "tree", treeHash.String())}
	want[commitHash] = written{plumbing.CommitObject, catFileRaw(t, dir, "commit", commitHash.String())}
	for h, w := range want {
		got, err := again.Read(w.typ, h)
		if err != nil || !bytes.Equal(got, w.data) {
			t.Errorf("read back %s %s: %d bytes, %v", w.typ, h, len(got), err)
		}
	}
	if h, ok, err := again.ReadRef("refs/codex/state"); !ok || err != nil || h != commitHash {
		t.Errorf("read back refs/codex/state: %s, %v, %v", h, ok, err)
	}
}

type written struct {
	typ  plumbing.ObjectType
	data []byte
}

// object is one object as git reads it.
type object struct {
	hash plumbing.Hash
	typ  plumbing.ObjectType
	data []byte
}

// allObjects is every object of the repository at dir and its alternates,
// read by `git cat-file --batch-all-objects --batch`.
func allObjects(t *testing.T, dir string) []object {
	t.Helper()
	cmd := exec.Command("git", "cat-file", "--batch-all-objects", "--batch")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git cat-file --batch-all-objects: %v", err)
	}
	var objs []object
	r := bufio.NewReader(bytes.NewReader(out))
	for {
		head, err := r.ReadString('\n')
		if head == "" && err != nil {
			return objs
		}
		f := strings.Fields(head)
		if len(f) != 3 {
			t.Fatalf("cat-file header %q", head)
		}
		typ, err := plumbing.ParseObjectType(f[1])
		if err != nil {
			t.Fatal(err)
		}
		size, err := strconv.Atoi(f[2])
		if err != nil {
			t.Fatal(err)
		}
		data := make([]byte, size+1)
		if _, err := io.ReadFull(r, data); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, object{plumbing.NewHash(f[0]), typ, data[:size]})
	}
}

// history is a fast-import stream of n commits after the first from
// (marks and names continue from there): blobs of every kind (empty,
// binary, executable, a symlink, a submodule's gitlink), versions of one
// large file that differ a little (which a repack stores as deltas of each
// other), a merge, a branch and an annotated tag.
func history(from, n int) string {
	var s strings.Builder
	big := strings.Repeat("the same long line of a large file that changes a little\n", 4000)
	for i := from; i < from+n; i++ {
		mark := i + 1
		fmt.Fprintf(&s, "commit refs/heads/main\nmark :%d\n", mark)
		fmt.Fprintf(&s, "author A U Thor <author@example.com> %d +0130\n", 1764100000+i*60)
		fmt.Fprintf(&s, "committer C O Mitter <committer@example.com> %d -0700\n", 1764100000+i*60)
		msg := fmt.Sprintf("commit %d\n\nCodex-Tool: test\n", i)
		fmt.Fprintf(&s, "data %d\n%s", len(msg), msg)
		if i > 0 && i == from {
			fmt.Fprintf(&s, "from refs/heads/main^0\n")
		}
		inline(&s, "big.txt", "100644", big+strings.Repeat(fmt.Sprintf("change %d\n", i), i+1))
		inline(&s, fmt.Sprintf("dir/sub/file%d.txt", i), "100644", fmt.Sprintf("file %d\n", i))
		if i == 0 {
			inline(&s, "empty", "100644", "")
			inline(&s, "binary.bin", "100644", "\x00\x01\x02\xff\n\x00")
			inline(&s, "run.sh", "100755", "#!/bin/sh\necho hi\n")
			inline(&s, "link", "120000", "big.txt")
			fmt.Fprintf(&s, "M 160000 %s vendor/module\n", strings.Repeat("ab", 20))
		}
		s.WriteString("\n")
	}
	last := from + n
	// a side branch from the first of these commits, merged back
	side := fmt.Sprintf("side %d\n", from)
	fmt.Fprintf(&s, "commit refs/heads/side\nmark :%d\n", 1000+from)
	fmt.Fprintf(&s, "committer C O Mitter <committer@example.com> %d +0000\n", 1764200000+from)
	fmt.Fprintf(&s, "data %d\n%sfrom :%d\n", len(side), side, from+1)
	inline(&s, fmt.Sprintf("side%d.txt", from), "100644", side)
	s.WriteString("\n")
	merge := fmt.Sprintf("merge %d\n", from)
	fmt.Fprintf(&s, "commit refs/heads/main\nmark :%d\n", 2000+from)
	fmt.Fprintf(&s, "committer C O Mitter <committer@example.com> %d +0000\n", 1764300000+from)
	fmt.Fprintf(&s, "data %d\n%sfrom :%d\nmerge :%d\n\n", len(merge), merge, last, 1000+from)
	tag := fmt.Sprintf("release %d\n", from)
	fmt.Fprintf(&s, "tag v%d\nfrom :%d\ntagger T A Gger <tagger@example.com> 1764400000 +0200\ndata %d\n%s\n", from, 2000+from, len(tag), tag)
	return s.String()
}

func inline(s *strings.Builder, path, mode, content string) {
	fmt.Fprintf(s, "M %s inline %s\ndata %d\n%s\n", mode, path, len(content), content)
}

// fastImport feeds stream to `git fast-import` in dir.
func fastImport(t *testing.T, dir, stream string) {
	t.Helper()
	// always a pack: below fastimport.unpackLimit objects git would
	// write them loose
	cmd := exec.Command("git", "-c", "fastimport.unpackLimit=1", "fast-import", "--quiet")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stream)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git fast-import: %v\n%s", err, out)
	}
}

// unpackInto writes every object of src's packs into dst as loose objects.
func unpackInto(t *testing.T, src, dst string) {
	t.Helper()
	packs, _ := filepath.Glob(filepath.Join(src, ".git", "objects", "pack", "*.pack"))
	for _, p := range packs {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "unpack-objects", "-q")
		cmd.Dir = dst
		cmd.Stdin = f
		out, err := cmd.CombinedOutput()
		f.Close()
		if err != nil {
			t.Fatalf("git unpack-objects: %v\n%s", err, out)
		}
	}
}

// copyRefs makes dst's refs src's.
func copyRefs(t *testing.T, src, dst string) {
	t.Helper()
	for _, line := range strings.Split(gitstatetest.Git(t, src, "for-each-ref", "--format=%(objectname) %(refname)"), "\n") {
		h, name, _ := strings.Cut(line, " ")
		gitstatetest.Git(t, dst, "update-ref", name, h)
	}
}

// requireDeltas fails unless dir's packs hold deltas of the kind ("ofs-delta"
// or "ref-delta") the layout is about.
func requireDeltas(t *testing.T, dir, kind string) {
	t.Helper()
	idx, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
	if len(idx) != 1 {
		t.Fatalf("%d packs after a full repack", len(idx))
	}
	out := gitstatetest.Git(t, dir, "verify-pack", "-v", idx[0])
	if !strings.Contains(out, "chain length = ") {
		t.Fatalf("the repack made no deltas:\n%s", out)
	}
	pack := strings.TrimSuffix(idx[0], ".idx") + ".pack"
	if got := packDeltaKinds(t, pack); !got[kind] {
		t.Fatalf("the pack holds no %s entries (%v)", kind, got)
	}
}

// packDeltaKinds reads the type of each entry of a pack (types 6 and 7 are
// offset and ref deltas), walking the entries by the offsets of its index.
func packDeltaKinds(t *testing.T, pack string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(pack)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := os.Open(strings.TrimSuffix(pack, ".pack") + ".idx")
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	cmd := exec.Command("git", "show-index")
	cmd.Stdin = idx
	list, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		off, err := strconv.Atoi(strings.Fields(line)[0])
		if err != nil || off >= len(b) {
			t.Fatalf("show-index line %q", line)
		}
		switch (b[off] >> 4) & 7 {
		case 6:
			kinds["ofs-delta"] = true
		case 7:
			kinds["ref-delta"] = true
		default:
			kinds["whole"] = true
		}
	}
	return kinds
}

// catFileRaw is `git cat-file <typ> <h>`, untrimmed.
func catFileRaw(t *testing.T, dir, typ, h string) []byte {
	t.Helper()
	cmd := exec.Command("git", "cat-file", typ, h)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git cat-file %s %s: %v", typ, h, err)
	}
	return out
}

// gitDirOf is the common git dir of a repository NewRepo made.
func gitDirOf(dir string) string { return filepath.Join(dir, ".git") }

package gitrepo

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestPackWindowReadsWhatGitPacked: every object of a pack git wrote reads
// back as git reads it, through the one window the objects share: small
// commits and trees laid out one after the other, blobs several windows
// long, and delta chains whose bases lie windows away from the deltas
// (each base read moves the window between two reads of its delta).
func TestPackWindowReadsWhatGitPacked(t *testing.T) {
	dir := t.TempDir()
	git := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(stdin)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return string(out)
	}
	git("", "init", "-q")
	r := rand.New(rand.NewPCG(27, 1))
	big := make([]byte, 5*packWindowSize/2) // incompressible: several windows packed
	for i := range big {
		big[i] = byte(r.IntN(256))
	}
	for i := 0; i < 40; i++ {
		// each version of big a small change of the last: git stores
		// most as deltas of others, far apart in the pack
		for j := 0; j < 8; j++ {
			big[r.IntN(len(big))] = byte(r.IntN(256))
		}
		if err := os.WriteFile(filepath.Join(dir, "big"), big, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("small-%d", i%7)), []byte(strings.Repeat(fmt.Sprintf("record %d\n", i), i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		git("", "add", "-A")
		git("", "commit", "-q", "-m", fmt.Sprintf("version %d", i))
	}
	git("", "repack", "-adfq", "--depth=50", "--window=50")
	all := strings.Fields(git("", "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)"))
	if len(all) < 100 {
		t.Fatalf("only %d objects packed", len(all)/2)
	}
	o := Open(filepath.Join(dir, ".git"), t.TempDir()).Objects
	defer o.Close()
	// twice: in pack order, then backwards (every read away from the
	// window the last one left)
	want := map[plumbing.Hash][]byte{}
	for pass := 0; pass < 2; pass++ {
		for k := 0; k < len(all); k += 2 {
			i := k
			if pass == 1 {
				i = len(all) - 2 - k
			}
			h, typ := plumbing.NewHash(all[i]), all[i+1]
			ot, err := plumbing.ParseObjectType(typ)
			if err != nil {
				t.Fatal(err)
			}
			got, err := o.Read(ot, h)
			if err != nil {
				t.Fatalf("read %s %s: %v", typ, h, err)
			}
			if pass == 0 {
				want[h] = []byte(git("", "cat-file", typ, h.String()))
			}
			if !bytes.Equal(got, want[h]) {
				t.Fatalf("pass %d, %s %s: %d bytes read, git reads %d", pass, typ, h, len(got), len(want[h]))
			}
		}
		o.cache = nil // read the deltas' bases again, through the window
	}
}

// TestDeltaChainReadsEachObjectOnce: reading an object stored as a chain
// of small deltas reads the pack at most once per object of the chain. A
// delta's bytes follow its header, in the window that read the header; its
// base used to be read first, moving the window, so every delta of a chain
// read its stretch twice (issue 27: a past state's ~10k trees cost ~15k
// more reads of the pack than they needed).
func TestDeltaChainReadsEachObjectOnce(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return string(out)
	}
	git("init", "-q")
	r := rand.New(rand.NewPCG(27, 2))
	lines := make([]string, 300)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d %d", i, r.IntN(1e9))
	}
	for i := 0; i < 60; i++ {
		// a small change of a text: git stores most versions as deltas
		// of others, with other objects laid between them
		lines[r.IntN(len(lines))] = fmt.Sprintf("changed %d %d", i, r.IntN(1e9))
		if err := os.WriteFile(filepath.Join(dir, "text"), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("other-%d", i)), []byte(fmt.Sprintf("other %d %d\n", i, r.IntN(1e9))), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", "-A")
		git("commit", "-q", "-m", fmt.Sprintf("version %d", i))
	}
	git("repack", "-adfq", "--depth=50", "--window=50")
	base, typ := map[string]string{}, map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(git("cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype) %(deltabase)")), "\n") {
		f := strings.Fields(l)
		typ[f[0]] = f[1]
		if f[2] != strings.Repeat("0", 40) {
			base[f[0]] = f[2]
		}
	}
	o := Open(filepath.Join(dir, ".git"), t.TempDir()).Objects
	defer o.Close()
	longest := 0
	for h := range base {
		chain := 1
		for b := base[h]; b != ""; b = base[b] {
			chain++
		}
		want := git("cat-file", typ[h], h)
		o.cache, o.win = nil, packWindow{}
		got, err := o.anyType(plumbing.NewHash(h))
		if err != nil {
			t.Fatalf("read %s: %v", h, err)
		}
		if string(got.data) != want {
			t.Fatalf("read %s %s: %d bytes, git reads %d", typ[h], h, len(got.data), len(want))
		}
		if o.win.n > chain {
			t.Errorf("%s, a chain of %d objects: %d reads of the pack", h, chain, o.win.n)
		}
		longest = max(longest, chain)
	}
	if longest < 5 {
		t.Fatalf("the longest delta chain packed is %d objects", longest)
	}
}

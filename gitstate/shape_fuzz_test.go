package gitstate_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// fuzzLayout is a layout like the tools' (tools.StateLayout, which gitstate
// cannot import): agents at depth 1, mail fanned out, kept.
func fuzzLayout() *gitstate.Layout {
	return &gitstate.Layout{Dirs: []gitstate.DirLayout{
		{Dir: "agents", Depth: 1, Keep: true},
		{Dir: "mail", Depth: 4, Fanout: 2, Keep: true},
		{Dir: "reviews/active", Depth: 1},
	}, MaxOther: 64}
}

// FuzzCheckShape feeds arbitrary trees to the check sync runs on a remote's
// state before adopting it. The input is a tree object's content in which
// every entry's 20-byte hash is replaced by one byte choosing among a few
// real objects (trees, records, a commit, a blob too big), so the entries
// lead somewhere; bytes that do not parse as entries are kept as they are.
// Whatever the input, the check returns, and either refuses with
// ErrInvalidState or accepts a tree that is canonical (decoding and
// encoding it gives it back: sorted, unique, modes as git writes them) and
// whose names git would check out.
func FuzzCheckShape(f *testing.F) {
	st, err := gitstate.Open(gitstatetest.NewRepo(f), gitstate.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	must := func(h string, err error) string {
		if err != nil {
			f.Fatal(err)
		}
		return h
	}
	tree := func(entries ...string) string { // "mode name hash"...
		var raw []byte
		for _, e := range entries {
			p := strings.SplitN(e, " ", 3)
			h, _ := hex.DecodeString(p[2])
			raw = append(append(raw, p[0]+" "+p[1]+"\x00"...), h...)
		}
		return must(st.WriteRawObject("tree", raw))
	}
	record := must(st.WriteRawObject("blob", []byte(`{"id":"alice"}`)))
	big := must(st.WriteRawObject("blob", bytes.Repeat([]byte("x"), 65)))
	agents := tree("100644 alice.json " + record)
	fan := tree("40000 d " + tree("100644 m-1.json "+record))
	mail := tree("40000 bob " + tree("40000 n "+fan))
	commit := must(st.WriteRawObject("commit", []byte("tree "+agents+"\n\nx\n")))
	targets := []string{tree(), record, big, agents, fan, mail, commit}
	if err := st.CheckShape(tree("40000 agents "+agents, "40000 mail "+mail), fuzzLayout()); err != nil {
		f.Fatalf("a well-formed state refused: %v", err)
	}

	entry := func(mode, name string, target byte) []byte {
		return append([]byte(mode+" "+name+"\x00"), target)
	}
	seeds := [][]byte{
		append(entry("40000", "agents", 3), entry("40000", "mail", 5)...),             // good
		append(entry("40000", "mail", 5), entry("40000", "mail", 0)...),               // twice
		append(entry("40000", "mail", 5), entry("40000", "agents", 3)...),             // unsorted
		entry("100644", "agents/mallory.json", 1),                                     // slash
		entry("40000", "..", 3), entry("40000", ".git", 3), entry("40000", ".GIT", 3), // names
		entry("100755", "x", 1), entry("120000", "x", 1), entry("160000", "x", 6), entry("040000", "x", 3), // modes
		entry("100644", "big", 2), entry("40000", "agents", 5), entry("100644", "agents", 1), // layout
		entry("40000", "future", 4), entry("100644", "c", 6), entry("40000", "t", 1), // types
		[]byte("100644 trunc"), []byte("40000 x\x00\x03\x03"), {},
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var raw []byte
		for len(in) > 0 {
			nul := bytes.IndexByte(in, 0)
			if nul < 0 || nul+1 >= len(in) {
				raw = append(raw, in...)
				break
			}
			h, _ := hex.DecodeString(targets[int(in[nul+1])%len(targets)])
			raw = append(append(raw, in[:nul+1]...), h...)
			in = in[nul+2:]
		}
		root, err := st.WriteRawObject("tree", raw)
		if err != nil {
			t.Fatal(err)
		}
		err = st.CheckShape(root, fuzzLayout())
		if err != nil {
			if !errors.Is(err, gitstate.ErrInvalidState) {
				t.Fatalf("refused without ErrInvalidState: %v", err)
			}
			return
		}
		ok, err := st.CanonicalTree(root)
		if err != nil || !ok {
			t.Fatalf("accepted a tree that is not canonical (%v): %q", err, raw)
		}
		for _, name := range strings.Split(string(raw), "\x00") {
			if strings.Contains(name, " ..") || strings.HasSuffix(strings.ToLower(name), " .git") {
				t.Fatalf("accepted a tree with a name git refuses: %q", raw)
			}
		}
	})
}

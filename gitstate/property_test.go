package gitstate_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// The property test's paths follow the state layout's convention: record
// names end in ".json" (or are "x"), directory names never do, so a name is
// never both. The names are chosen to make git's tree order ("a.json" sorts
// before the directory "a", which sorts as "a/") differ from naive order.
var (
	propDirs  = []string{"a", "a-b", "a0", "b", "mail", "z"}
	propFiles = []string{"a.json", "a-b.json", "a0.json", "b.json", "1.json", "x"}
)

type model map[string][]byte

func (m model) clone() model {
	c := make(model, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// list is what List(dir) must return: the names directly under dir, in
// byte order.
func (m model) list(dir string) []gitstate.Entry {
	prefix := strings.Trim(dir, "/")
	if prefix != "" {
		prefix += "/"
	}
	names := map[string]bool{}
	for p := range m {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		name, _, isDir := strings.Cut(rest, "/")
		names[name] = isDir
	}
	out := make([]gitstate.Entry, 0, len(names))
	for n, d := range names {
		out = append(out, gitstate.Entry{Name: n, Dir: d})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// walk is what Walk(dir) must visit, in path order.
func (m model) walk(dir string) []string {
	prefix := strings.Trim(dir, "/")
	if prefix != "" {
		prefix += "/"
	}
	var out []string
	for p := range m {
		if strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func (m model) paths() []string { return m.walk("") }

// dirs lists every directory the model implies, "" (the root) included.
func (m model) dirs() []string {
	set := map[string]bool{"": true}
	for p := range m {
		for i := strings.IndexByte(p, '/'); i >= 0; {
			set[p[:i]] = true
			j := strings.IndexByte(p[i+1:], '/')
			if j < 0 {
				break
			}
			i += 1 + j
		}
	}
	out := make([]string, 0, len(set))
	for d := range set {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

type propGen struct{ r *rand.Rand }

func (g propGen) dir() string {
	parts := make([]string, g.r.IntN(4))
	for i := range parts {
		parts[i] = propDirs[g.r.IntN(len(propDirs))]
	}
	return strings.Join(parts, "/")
}

func (g propGen) path() string {
	d := g.dir()
	f := propFiles[g.r.IntN(len(propFiles))]
	if d == "" {
		return f
	}
	return d + "/" + f
}

// pick returns an existing path of m with probability pct/100, else a
// random one.
func (g propGen) pick(m model, pct int) string {
	if len(m) > 0 && g.r.IntN(100) < pct {
		ps := m.paths()
		return ps[g.r.IntN(len(ps))]
	}
	return g.path()
}

func (g propGen) content() (raw []byte, jsonVal any) {
	switch g.r.IntN(4) {
	case 0:
		b := make([]byte, g.r.IntN(24)) // binary, possibly empty
		for i := range b {
			b[i] = byte(g.r.IntN(256))
		}
		return b, nil
	default:
		return nil, rec{N: g.r.IntN(1000), Text: strconv.Itoa(g.r.IntN(5))}
	}
}

var invalidPaths = []string{"", "/", "a//b.json", "/a.json", "a/", ".", "..", "a/../b.json", "a/./b.json", "a\x00.json", ".git/x.json", "a/.GIT"}

func entriesEqual(a, b []gitstate.Entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestPropertyTransactionsMatchModel runs random transactions of Put,
// Delete, Read, List and Walk (some committed, some discarded, some failed)
// against the store and an in-memory model, and after each one compares the
// tip, read through the Store and through the git CLI, with the model.
func TestPropertyTransactionsMatchModel(t *testing.T) {
	txs := 200
	if testing.Short() || raceEnabled {
		txs = 80
	}
	seed := time.Now().UnixNano()
	if s := os.Getenv("GITSTATE_PROPERTY_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (rerun with GITSTATE_PROPERTY_SEED=%d)", seed, seed)
	g := propGen{rand.New(rand.NewPCG(uint64(seed), 42))}
	ctx := context.Background()
	dir := newStateRepo(t)
	s, err := gitstate.Open(dir, gitstate.Options{PackEvery: 40})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	committed := model{"config/version.json": mustRead(t, s, "config/version.json")}
	commits := 1
	tip := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)
	boom := errors.New("handler failed")

	for n := 0; n < txs; n++ {
		overlay := committed.clone()
		var ops []string // for failure messages
		outcome := g.r.IntN(20)
		c, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(meta(fmt.Sprintf("tx%d", n)))
			for k := 1 + g.r.IntN(8); k > 0; k-- {
				switch op := g.r.IntN(20); {
				case op < 11: // put
					p := g.pick(overlay, 35)
					raw, v := g.content()
					var err error
					if v != nil {
						err = tx.Put(p, v)
						raw = mustJSON(t, v)
					} else {
						err = tx.PutRaw(p, raw)
					}
					if err != nil {
						return fmt.Errorf("put %s: %v", p, err)
					}
					overlay[p] = raw
					ops = append(ops, "put "+p)
				case op < 15: // delete
					p := g.pick(overlay, 80)
					if err := tx.Delete(p); err != nil {
						return fmt.Errorf("delete %s: %v", p, err)
					}
					delete(overlay, p)
					ops = append(ops, "delete "+p)
				case op < 17: // read, of a record or of a directory
					p := g.pick(overlay, 70)
					if g.r.IntN(4) == 0 {
						p = g.dir()
						if p == "" {
							p = "a"
						}
					}
					b, err := tx.Read(p)
					want, ok := overlay[p]
					switch {
					case ok && (err != nil || !bytes.Equal(b, want)):
						t.Errorf("tx%d after %v: Read(%s) = %q, %v; want %q", n, ops, p, b, err, want)
					case !ok && !errors.Is(err, gitstate.ErrNotFound):
						t.Errorf("tx%d after %v: Read(%s) = %q, %v; want ErrNotFound", n, ops, p, b, err)
					}
				case op < 18: // list
					d := g.dir()
					got, err := tx.List(d)
					if want := overlay.list(d); err != nil || !entriesEqual(got, want) {
						t.Errorf("tx%d after %v: List(%q) = %v, %v; want %v", n, ops, d, got, err, want)
					}
				case op < 19: // walk
					d := g.dir()
					var got []string
					err := tx.Walk(d, func(p string, b []byte) error {
						got = append(got, p)
						if !bytes.Equal(b, overlay[p]) {
							t.Errorf("tx%d: Walk(%q) gave %s = %q, want %q", n, d, p, b, overlay[p])
						}
						return nil
					})
					if want := overlay.walk(d); err != nil || strings.Join(got, ",") != strings.Join(want, ",") {
						t.Errorf("tx%d after %v: Walk(%q) = %v, %v; want %v", n, ops, d, got, err, want)
					}
				default: // an invalid path changes nothing
					p := invalidPaths[g.r.IntN(len(invalidPaths))]
					if err := tx.PutRaw(p, []byte("x")); !errors.Is(err, gitstate.ErrInvalidPath) {
						t.Errorf("tx%d: Put(%q) = %v, want ErrInvalidPath", n, p, err)
					}
					if err := tx.Delete(p); !errors.Is(err, gitstate.ErrInvalidPath) {
						t.Errorf("tx%d: Delete(%q) = %v, want ErrInvalidPath", n, p, err)
					}
				}
			}
			switch {
			case outcome < 3:
				tx.Discard()
			case outcome < 5:
				return boom
			}
			return nil
		})
		if t.Failed() {
			t.FailNow()
		}
		switch {
		case outcome < 3: // discarded: an audit commit with the old tree
			if err != nil {
				t.Fatalf("tx%d (discarded): %v", n, err)
			}
			commits++
			if chs, err := s.Changes(ctx, c.Hash); err != nil || len(chs) != 0 {
				t.Fatalf("tx%d: discarded transaction changed %v (%v)", n, chs, err)
			}
		case outcome < 5: // failed: no commit
			if !errors.Is(err, boom) {
				t.Fatalf("tx%d (failing): err = %v", n, err)
			}
			if got := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState); got != tip {
				t.Fatalf("tx%d: failed transaction moved the ref", n)
			}
		default:
			if err != nil {
				t.Fatalf("tx%d %v: %v", n, ops, err)
			}
			commits++
			checkChanges(t, s, c.Hash, committed, overlay)
			committed = overlay
		}
		if outcome >= 3 && outcome < 5 {
			continue
		}
		if c.Ref != gitstate.RefState {
			// it changed nothing: a read, on this machine's reads ref,
			// and the state did not move
			if !strings.HasPrefix(c.Ref, gitstate.ReadsPrefix) {
				t.Fatalf("tx%d: committed on %q", n, c.Ref)
			}
			if got := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState); got != tip {
				t.Fatalf("tx%d: a transaction that changed nothing moved the state", n)
			}
			commits--
			continue
		}
		if c.Parent != tip {
			t.Fatalf("tx%d: parent = %s, want %s", n, c.Parent, tip)
		}
		tip = c.Hash
		checkTip(t, s, dir, c.Hash, committed, g)
		if n%10 == 0 {
			if got := gitstatetest.Git(t, dir, "rev-list", "--count", gitstate.RefState); got != strconv.Itoa(commits) {
				t.Fatalf("tx%d: %s commits, want %d", n, got, commits)
			}
		}
	}
	// every directory lists right at the end.
	err = s.View(ctx, func(sn *gitstate.Snapshot) error {
		for _, d := range committed.dirs() {
			got, err := sn.List(d)
			if want := committed.list(d); err != nil || !entriesEqual(got, want) {
				t.Errorf("List(%q) = %v, %v; want %v", d, got, err, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d transactions, %d commits, %d records at the end", txs, commits, len(committed))
	assertHealthy(t, dir, commits)
}

func mustRead(t *testing.T, s *gitstate.Store, p string) []byte {
	t.Helper()
	var b []byte
	if err := s.View(context.Background(), func(sn *gitstate.Snapshot) error {
		var err error
		b, err = sn.Read(p)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return b
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	// what Tx.Put stores: indented JSON and a newline.
	var buf bytes.Buffer
	enc := jsonIndent(&buf)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// checkChanges compares Store.Changes for commit with the model's diff.
func checkChanges(t *testing.T, s *gitstate.Store, commit string, before, after model) {
	t.Helper()
	var want []string
	for p, b := range after {
		if old, ok := before[p]; !ok {
			want = append(want, "add "+p)
		} else if !bytes.Equal(old, b) {
			want = append(want, "modify "+p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			want = append(want, "delete "+p)
		}
	}
	sort.Strings(want)
	chs, err := s.Changes(context.Background(), commit)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range chs {
		got = append(got, c.Action+" "+c.Path)
	}
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("Changes(%s) = %v, want %v", commit, got, want)
	}
}

// checkTip compares the state at commit with m: through a Snapshot (Walk,
// Read, List) and through git (ls-tree, cat-file for a sample), and checks
// that the tree has no empty directory.
func checkTip(t *testing.T, s *gitstate.Store, dir, commit string, m model, g propGen) {
	t.Helper()
	err := s.ViewAt(context.Background(), commit, func(sn *gitstate.Snapshot) error {
		got := model{}
		if err := sn.Walk("", func(p string, b []byte) error { got[p] = b; return nil }); err != nil {
			return err
		}
		if len(got) != len(m) {
			t.Fatalf("snapshot has %d records, model %d:\n%v\n%v", len(got), len(m), got.paths(), m.paths())
		}
		for p, b := range m {
			if !bytes.Equal(got[p], b) {
				t.Fatalf("snapshot %s = %q, model %q", p, got[p], b)
			}
		}
		for i := 0; i < 3; i++ {
			d := g.dir()
			l, err := sn.List(d)
			if want := m.list(d); err != nil || !entriesEqual(l, want) {
				t.Fatalf("snapshot List(%q) = %v, %v; want %v", d, l, err, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// one `git ls-tree -r -t`: the records are the model's, and every
	// directory holds at least one record.
	var files []string
	for _, line := range strings.Split(gitstatetest.Git(t, dir, "ls-tree", "-r", "-t", "-z", commit), "\x00") {
		info, name, ok := strings.Cut(line, "\t")
		switch {
		case !ok:
		case strings.Contains(info, " tree "):
			if len(m.walk(name)) == 0 {
				t.Fatalf("empty directory %q in the tree of %s", name, commit)
			}
		default:
			files = append(files, name)
		}
	}
	sort.Strings(files)
	if want := m.paths(); strings.Join(files, "\n") != strings.Join(want, "\n") {
		t.Fatalf("git ls-tree -r %s:\n%v\nmodel:\n%v", commit, files, want)
	}
	ps := m.paths()
	if len(ps) > 0 {
		p := ps[g.r.IntN(len(ps))]
		out, err := gitCatBlob(dir, commit+":"+p)
		if err != nil || !bytes.Equal(out, m[p]) {
			t.Fatalf("git cat-file blob %s:%s = %q, %v; model %q", commit, p, out, err, m[p])
		}
	}
}

// TestRecordDirectoryConflicts: a name is a record or a directory, never
// both. A transaction that would need both fails (nothing committed) rather
// than silently dropping one side; Delete removes records, not directories;
// and a name changes kind only once its old content is gone.
func TestRecordDirectoryConflicts(t *testing.T) {
	ctx := context.Background()
	dir := newStateRepo(t)
	s, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	update := func(fn func(tx *gitstate.Tx) error) error {
		_, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(meta("conflict"))
			return fn(tx)
		})
		return err
	}
	if err := update(func(tx *gitstate.Tx) error {
		tx.Put("d/x.json", rec{N: 1})
		tx.Put("d/y.json", rec{N: 2})
		return tx.Put("f", rec{N: 3})
	}); err != nil {
		t.Fatal(err)
	}
	base := gitTreePaths(t, dir, gitstate.RefState)
	tip := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)
	mustFail := func(name string, fn func(tx *gitstate.Tx) error) {
		t.Helper()
		undone := false
		err := update(func(tx *gitstate.Tx) error {
			tx.OnAbort(func(context.Context) error { undone = true; return nil })
			return fn(tx)
		})
		if !errors.Is(err, gitstate.ErrInvalidPath) {
			t.Errorf("%s: err = %v, want ErrInvalidPath", name, err)
		}
		if !undone {
			t.Errorf("%s: abort hooks did not run", name)
		}
		if got := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState); got != tip {
			t.Fatalf("%s: ref moved", name)
		}
	}
	mustFail("record over a directory", func(tx *gitstate.Tx) error { return tx.Put("d", rec{}) })
	mustFail("directory under a record", func(tx *gitstate.Tx) error { return tx.Put("f/g.json", rec{}) })
	mustFail("both in one transaction", func(tx *gitstate.Tx) error {
		tx.Put("n", rec{})
		return tx.Put("n/m.json", rec{})
	})
	mustFail("record over a directory emptied only in part", func(tx *gitstate.Tx) error {
		tx.Delete("d/x.json")
		return tx.Put("d", rec{})
	})

	// deleting under a record, or deleting a directory's name, changes nothing.
	if err := update(func(tx *gitstate.Tx) error {
		tx.Delete("f/missing.json")
		tx.Delete("d")
		if l, err := tx.List(""); err != nil || !entriesEqual(l, []gitstate.Entry{{Name: "config", Dir: true}, {Name: "d", Dir: true}, {Name: "f"}}) {
			t.Errorf("tx.List after deleting a directory's name = %v, %v", l, err)
		}
		n := 0
		tx.Walk("d", func(string, []byte) error { n++; return nil })
		if n != 2 {
			t.Errorf("tx.Walk(d) after deleting a directory's name: %d records", n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := gitTreePaths(t, dir, gitstate.RefState); strings.Join(got, ",") != strings.Join(base, ",") {
		t.Fatalf("tree after no-op deletes = %v, want %v", got, base)
	}
	// a name changes kind once its old content is gone.
	if err := update(func(tx *gitstate.Tx) error {
		tx.Delete("d/x.json")
		tx.Delete("d/y.json")
		tx.Put("d", rec{N: 9})
		tx.Delete("f")
		return tx.Put("f/g.json", rec{N: 10})
	}); err != nil {
		t.Fatal(err)
	}
	if got := gitTreePaths(t, dir, gitstate.RefState); strings.Join(got, ",") != "config/version.json,d,f/g.json" {
		t.Fatalf("tree after kind changes = %v", got)
	}
	assertHealthy(t, dir, 3) // init and two changes: the no-op deletes are a read
}

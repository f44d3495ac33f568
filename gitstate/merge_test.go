package gitstate_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// emptyTree is git's hash of the tree with no entries.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// resolveCall is one call of the test resolver; a nil side is "<nil>".
type resolveCall struct {
	Path, Base, Ours, Theirs string
}

func (c resolveCall) String() string {
	return fmt.Sprintf("%s(base=%s ours=%s theirs=%s)", c.Path, c.Base, c.Ours, c.Theirs)
}

// swapped is the call as the other side of the merge makes it.
func (c resolveCall) swapped() resolveCall {
	c.Ours, c.Theirs = c.Theirs, c.Ours
	return c
}

func orNil(b []byte) string {
	if b == nil {
		return "<nil>"
	}
	return string(b)
}

// testResolver is a symmetric resolver that depends only on its arguments,
// as a gitstate.Resolver must, and records its calls:
//
//   - a side that is absent loses to the side that changed (deletion vs
//     change keeps the change);
//   - a side whose content starts with "win" wins (the larger one if both);
//   - "drop" on either side removes the record;
//   - anything else becomes "merged:<smaller>+<larger>".
type testResolver struct {
	mu    sync.Mutex
	calls []resolveCall
}

func (r *testResolver) resolve(path string, base, ours, theirs []byte) []byte {
	r.mu.Lock()
	r.calls = append(r.calls, resolveCall{path, orNil(base), orNil(ours), orNil(theirs)})
	r.mu.Unlock()
	switch {
	case ours == nil:
		return theirs
	case theirs == nil:
		return ours
	}
	lo, hi := string(ours), string(theirs)
	if lo > hi {
		lo, hi = hi, lo
	}
	switch {
	case lo == "drop" || hi == "drop":
		return nil
	case strings.HasPrefix(hi, "win"):
		return []byte(hi)
	case strings.HasPrefix(lo, "win"):
		return []byte(lo)
	}
	return []byte("merged:" + lo + "+" + hi)
}

func (r *testResolver) take() []resolveCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// files is a state tree as path -> content; a nil files for base means no
// common base (the zero hash).
type files map[string]string

// mergeScenario is one row of the mergeTrees matrix.
type mergeScenario struct {
	name               string
	base, ours, theirs files
	want               files
	// calls are the resolver calls expected when merging ours into
	// theirs' other side (base, ours, theirs), in path order.
	calls []resolveCall
}

func mergeScenarios() []mergeScenario {
	common := files{"config/config.json": "cfg", "agents/a.json": "a1", "agents/b.json": "b1", "mail/bob/ab/m-1.json": "m1"}
	with := func(base files, changes files) files {
		out := files{}
		for p, c := range base {
			out[p] = c
		}
		for p, c := range changes {
			if c == "" {
				delete(out, p)
				continue
			}
			out[p] = c
		}
		return out
	}
	return []mergeScenario{
		{
			name: "01 nothing changed",
			base: common, ours: common, theirs: common,
			want: common,
		},
		{
			name: "02 only ours changed",
			base: common, ours: with(common, files{"agents/a.json": "a2", "mail/bob/cd/m-2.json": "m2"}), theirs: common,
			want: with(common, files{"agents/a.json": "a2", "mail/bob/cd/m-2.json": "m2"}),
		},
		{
			name: "03 only theirs changed",
			base: common, ours: common, theirs: with(common, files{"agents/b.json": "b2", "decisions/xy/d-1.json": "d1"}),
			want: with(common, files{"agents/b.json": "b2", "decisions/xy/d-1.json": "d1"}),
		},
		{
			name: "04 both made the same change",
			base: common,
			ours: with(common, files{"agents/a.json": "a2", "mail/bob/ab/m-3.json": "m3"}), theirs: with(common, files{"agents/a.json": "a2", "mail/bob/ab/m-3.json": "m3"}),
			want: with(common, files{"agents/a.json": "a2", "mail/bob/ab/m-3.json": "m3"}),
		},
		{
			name: "05 both changed different records",
			base: common,
			ours: with(common, files{"agents/a.json": "a2"}), theirs: with(common, files{"agents/b.json": "b2"}),
			want: with(common, files{"agents/a.json": "a2", "agents/b.json": "b2"}),
		},
		{
			name: "06 both changed one record differently: the resolver decides",
			base: common,
			ours: with(common, files{"agents/a.json": "a-ours"}), theirs: with(common, files{"agents/a.json": "a-theirs"}),
			want:  with(common, files{"agents/a.json": "merged:a-ours+a-theirs"}),
			calls: []resolveCall{{"agents/a.json", "a1", "a-ours", "a-theirs"}},
		},
		{
			name: "07 the resolver picks one side's version",
			base: common,
			ours: with(common, files{"agents/a.json": "a-ours"}), theirs: with(common, files{"agents/a.json": "win-theirs"}),
			want:  with(common, files{"agents/a.json": "win-theirs"}),
			calls: []resolveCall{{"agents/a.json", "a1", "a-ours", "win-theirs"}},
		},
		{
			name: "08 the resolver removes the record",
			base: common,
			ours: with(common, files{"agents/a.json": "drop"}), theirs: with(common, files{"agents/a.json": "a-theirs"}),
			want:  with(common, files{"agents/a.json": ""}),
			calls: []resolveCall{{"agents/a.json", "a1", "drop", "a-theirs"}},
		},
		{
			name: "09 deleted on ours, changed on theirs",
			base: common,
			ours: with(common, files{"agents/a.json": ""}), theirs: with(common, files{"agents/a.json": "a2"}),
			want:  with(common, files{"agents/a.json": "a2"}),
			calls: []resolveCall{{"agents/a.json", "a1", "<nil>", "a2"}},
		},
		{
			name: "10 deleted on one side, untouched on the other",
			base: common,
			ours: with(common, files{"agents/a.json": ""}), theirs: with(common, files{"agents/b.json": "b2"}),
			want: with(common, files{"agents/a.json": "", "agents/b.json": "b2"}),
		},
		{
			name: "11 deleted on both sides",
			base: common,
			ours: with(common, files{"agents/a.json": ""}), theirs: with(common, files{"agents/a.json": "", "agents/b.json": "b2"}),
			want: with(common, files{"agents/a.json": "", "agents/b.json": "b2"}),
		},
		{
			name: "12 added on both sides, different paths in one new directory",
			base: common,
			ours: with(common, files{"mail/carol/01/m-4.json": "m4"}), theirs: with(common, files{"mail/carol/01/m-5.json": "m5", "mail/carol/02/m-6.json": "m6"}),
			want: with(common, files{"mail/carol/01/m-4.json": "m4", "mail/carol/01/m-5.json": "m5", "mail/carol/02/m-6.json": "m6"}),
		},
		{
			name: "13 added on both sides, same path, different content",
			base: common,
			ours: with(common, files{"decisions/xy/d-1.json": "d-ours"}), theirs: with(common, files{"decisions/xy/d-1.json": "d-theirs"}),
			want:  with(common, files{"decisions/xy/d-1.json": "merged:d-ours+d-theirs"}),
			calls: []resolveCall{{"decisions/xy/d-1.json", "<nil>", "d-ours", "d-theirs"}},
		},
		{
			name: "14 a directory deleted on one side, a record added in it on the other",
			base: common,
			ours: with(common, files{"mail/bob/ab/m-1.json": ""}), theirs: with(common, files{"mail/bob/ab/m-7.json": "m7"}),
			want: with(common, files{"mail/bob/ab/m-1.json": "", "mail/bob/ab/m-7.json": "m7"}),
		},
		{
			name: "15 a directory deleted on one side, a record in it changed on the other",
			base: common,
			ours: with(common, files{"mail/bob/ab/m-1.json": ""}), theirs: with(common, files{"mail/bob/ab/m-1.json": "m1-read"}),
			want:  with(common, files{"mail/bob/ab/m-1.json": "m1-read"}),
			calls: []resolveCall{{"mail/bob/ab/m-1.json", "m1", "<nil>", "m1-read"}},
		},
		{
			name: "16 a record on one side where the other has a directory: the directory stays",
			base: common,
			ours: with(common, files{"x": "record"}), theirs: with(common, files{"x/y.json": "y"}),
			want: with(common, files{"x/y.json": "y"}),
		},
		{
			name: "17 a record replaced by a directory on one side, changed on the other",
			base: with(common, files{"x": "record"}),
			ours: with(common, files{"x": "", "x/y.json": "y"}), theirs: with(common, files{"x": "record2"}),
			want: with(common, files{"x/y.json": "y"}),
		},
		{
			name: "18 no common base: union, both-added records resolved against nothing",
			base: nil,
			ours: files{"config/config.json": "cfg", "agents/a.json": "a1", "x.json": "x-ours"}, theirs: files{"config/config.json": "cfg", "agents/b.json": "b1", "x.json": "x-theirs"},
			want:  files{"config/config.json": "cfg", "agents/a.json": "a1", "agents/b.json": "b1", "x.json": "merged:x-ours+x-theirs"},
			calls: []resolveCall{{"x.json", "<nil>", "x-ours", "x-theirs"}},
		},
		{
			name: "19 empty base tree behaves as no base",
			base: files{},
			ours: files{"agents/a.json": "a1", "x.json": "x-ours"}, theirs: files{"agents/b.json": "b1", "x.json": "x-theirs"},
			want:  files{"agents/a.json": "a1", "agents/b.json": "b1", "x.json": "merged:x-ours+x-theirs"},
			calls: []resolveCall{{"x.json", "<nil>", "x-ours", "x-theirs"}},
		},
		{
			name: "20 everything deleted on both sides: the empty tree",
			base: common, ours: files{}, theirs: files{},
			want: files{},
		},
		{
			name: "21 each side deletes half: the empty tree",
			base: files{"agents/a.json": "a1", "agents/b.json": "b1"},
			ours: files{"agents/b.json": "b1"}, theirs: files{"agents/a.json": "a1"},
			want: files{},
		},
		{
			name: "22 a directory emptied by the two sides together disappears",
			base: common,
			ours: with(common, files{"agents/a.json": ""}), theirs: with(common, files{"agents/b.json": ""}),
			want: with(common, files{"agents/a.json": "", "agents/b.json": ""}),
		},
		{
			name: "23 no base, nothing on either side",
			base: nil, ours: files{}, theirs: files{},
			want: files{},
		},
		{
			name: "24 git's tree order: a.json, a-b, a (a directory sorts as a/)",
			base: files{"a.json": "1"},
			ours: files{"a.json": "1", "a/x.json": "ax", "a-b.json": "ab"}, theirs: files{"a.json": "2", "a0/y.json": "a0y", "a/z.json": "az"},
			want: files{"a.json": "2", "a/x.json": "ax", "a/z.json": "az", "a-b.json": "ab", "a0/y.json": "a0y"},
		},
		{
			name: "25 many records changed on both sides, some the same, some not",
			base: files{"r/1.json": "1", "r/2.json": "2", "r/3.json": "3", "r/4.json": "4"},
			ours: files{"r/1.json": "1o", "r/2.json": "2x", "r/3.json": "3", "r/4.json": "drop"}, theirs: files{"r/1.json": "1t", "r/2.json": "2x", "r/3.json": "3t", "r/4.json": "4t"},
			want: files{"r/1.json": "merged:1o+1t", "r/2.json": "2x", "r/3.json": "3t"},
			calls: []resolveCall{
				{"r/1.json", "1", "1o", "1t"},
				{"r/4.json", "4", "drop", "4t"},
			},
		},
	}
}

// TestMergeTreesMatrix runs every scenario as merge(base, ours, theirs) and
// merge(base, theirs, ours): both give the expected files, the very same
// tree hash, and the expected resolver calls (mirrored).
func TestMergeTreesMatrix(t *testing.T) {
	s, dir := openInit(t)
	r := &testResolver{}
	for _, sc := range mergeScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			write := func(f files) string {
				if f == nil {
					return ""
				}
				h, err := s.WriteTree(f)
				if err != nil {
					t.Fatal(err)
				}
				return h
			}
			b, o, th := write(sc.base), write(sc.ours), write(sc.theirs)
			got, report, err := s.MergeTrees(b, o, th, r.resolve)
			if err != nil {
				t.Fatal(err)
			}
			calls := r.take()
			gotSwapped, reportSwapped, err := s.MergeTrees(b, th, o, r.resolve)
			if err != nil {
				t.Fatal(err)
			}
			callsSwapped := r.take()

			gotFiles, err := s.TreeFiles(got)
			if err != nil {
				t.Fatal(err)
			}
			want := sc.want
			if !reflect.DeepEqual(map[string]string(gotFiles), map[string]string(want)) {
				t.Errorf("merged tree:\n got  %v\n want %v", gotFiles, want)
			}
			if got != gotSwapped {
				t.Errorf("not symmetric: merge(b,o,t) = %s, merge(b,t,o) = %s", got, gotSwapped)
			}
			if len(want) == 0 && got != emptyTree {
				t.Errorf("empty result is %s, want the empty tree %s", got, emptyTree)
			}
			if wantTree, err := s.WriteTree(want); err != nil || got != wantTree {
				t.Errorf("merged tree %s, want %s (the tree a transaction writes for the same files): %v", got, wantTree, err)
			}
			if !sameCalls(calls, sc.calls) {
				t.Errorf("resolver calls:\n got  %v\n want %v", calls, sc.calls)
			}
			var mirrored []resolveCall
			for _, c := range sc.calls {
				mirrored = append(mirrored, c.swapped())
			}
			if !sameCalls(callsSwapped, mirrored) {
				t.Errorf("swapped resolver calls:\n got  %v\n want %v", callsSwapped, mirrored)
			}
			var wantResolved []string
			for _, c := range sc.calls {
				wantResolved = append(wantResolved, c.Path)
			}
			if !reflect.DeepEqual(report.Resolved, wantResolved) || !reflect.DeepEqual(reportSwapped.Resolved, wantResolved) {
				t.Errorf("report.Resolved = %v / %v, want %v", report.Resolved, reportSwapped.Resolved, wantResolved)
			}
		})
	}
	// every object the merges wrote is one git accepts (sorted entries,
	// no duplicate names): what a receiving host's fsck would check.
	if out, err := gitstatetest.GitErr(dir, "fsck", "--strict", "--no-dangling"); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
}

func sameCalls(a, b []resolveCall) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

// TestMergeTreesSkipsUnchangedSubtrees: a subtree that is the same on both
// sides is taken by hash without being read, so merge cost follows the
// changes, not the state's size. The shared subtree here does not even
// exist in the object store.
func TestMergeTreesSkipsUnchangedSubtrees(t *testing.T) {
	s, dir := openInit(t)
	missing := "1111111111111111111111111111111111111111"
	small := func(content string) string {
		h, err := s.WriteTree(files{"x.json": content})
		if err != nil {
			t.Fatal(err)
		}
		return gitstatetest.Git(t, dir, "rev-parse", h+":")
	}
	mktree := func(smallTree string) string {
		cmd := exec.Command("git", "mktree", "--missing")
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(fmt.Sprintf("040000 tree %s\tbig\n040000 tree %s\tsmall\n", missing, smallTree))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git mktree: %v", err)
		}
		return strings.TrimSpace(string(out))
	}
	b, o, th := mktree(small("0")), mktree(small("1")), mktree(small("2"))
	r := &testResolver{}
	got, _, err := s.MergeTrees(b, o, th, r.resolve)
	if err != nil {
		t.Fatalf("merge read the unchanged subtree: %v", err)
	}
	if out := gitstatetest.Git(t, dir, "ls-tree", got); !strings.Contains(out, missing+"\tbig") {
		t.Fatalf("merged tree lost the shared subtree:\n%s", out)
	}
	if calls := r.take(); len(calls) != 1 || calls[0].Path != "small/x.json" {
		t.Fatalf("resolver calls %v", calls)
	}
}

// --- Store.Merge ---

func putRaw(t *testing.T, s *gitstate.Store, kv ...string) gitstate.Commit {
	t.Helper()
	c, err := s.Update(context.Background(), func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("put"))
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "" {
				if err := tx.Delete(kv[i]); err != nil {
					return err
				}
				continue
			}
			if err := tx.PutRaw(kv[i], []byte(kv[i+1])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func finishMeta(tx *gitstate.Tx, _ gitstate.MergeReport) error {
	tx.SetMeta(meta("merge"))
	return nil
}

func tip(t *testing.T, dir string) string {
	t.Helper()
	return gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)
}

func resetState(t testing.TB, dir, to string) {
	t.Helper()
	gitstatetest.Git(t, dir, "update-ref", gitstate.RefState, to)
}

func TestMergeUpToDate(t *testing.T) {
	ctx := context.Background()
	s, dir := openInit(t)
	c0 := tip(t, dir)
	c1 := putRaw(t, s, "a.json", "1")
	for _, rev := range []string{c0, c1.Hash, gitstate.RefState + "~1"} {
		r := &testResolver{}
		res, err := s.Merge(ctx, rev, r.resolve, finishMeta)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != gitstate.MergeUpToDate || res.Commit != c1.Hash {
			t.Errorf("Merge(%s) = %+v, want up-to-date at %s", rev, res, c1.Hash)
		}
		if got := tip(t, dir); got != c1.Hash {
			t.Errorf("the ref moved to %s", got)
		}
	}
}

func TestMergeFastForward(t *testing.T) {
	ctx := context.Background()
	s, dir := openInit(t)
	c1 := putRaw(t, s, "a.json", "1")
	c2 := putRaw(t, s, "b.json", "2")
	resetState(t, dir, c1.Hash)
	res, err := s.Merge(ctx, c2.Hash, (&testResolver{}).resolve, func(*gitstate.Tx, gitstate.MergeReport) error {
		t.Error("a fast-forward must not write a merge commit")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != gitstate.MergeFastForward || res.Commit != c2.Hash || tip(t, dir) != c2.Hash {
		t.Fatalf("Merge = %+v, tip %s; want fast-forward to %s", res, tip(t, dir), c2.Hash)
	}
	// the next transaction continues from theirs' clock
	c3 := putRaw(t, s, "c.json", "3")
	if c3.Clock != c2.Clock+1 || c3.Parent != c2.Hash {
		t.Fatalf("after fast-forward: clock %d parent %s, want %d on %s", c3.Clock, c3.Parent, c2.Clock+1, c2.Hash)
	}
}

// divergent makes two histories from one base: ours (left at the ref) and
// theirs (returned), with the given writes on each side.
func divergent(t *testing.T, s *gitstate.Store, dir string, ours, theirs [][]string) (base, o, th gitstate.Commit) {
	t.Helper()
	base = putRaw(t, s, "base.json", "b")
	for _, kv := range theirs {
		th = putRaw(t, s, kv...)
	}
	resetState(t, dir, base.Hash)
	for _, kv := range ours {
		o = putRaw(t, s, kv...)
	}
	return base, o, th
}

func TestMergeMerged(t *testing.T) {
	ctx := context.Background()
	s, dir := openInit(t)
	// theirs runs ahead in clock: 3 commits against ours' 1.
	_, o, th := divergent(t, s, dir,
		[][]string{{"a.json", "ours", "mine.json", "1"}},
		[][]string{{"a.json", "theirs"}, {"yours.json", "2"}, {"base.json", ""}})
	r := &testResolver{}
	var gotReport gitstate.MergeReport
	res, err := s.Merge(ctx, th.Hash, r.resolve, func(tx *gitstate.Tx, report gitstate.MergeReport) error {
		gotReport = report
		// the finisher sees the merged tree and may write to it
		b, err := tx.Read("a.json")
		if err != nil || string(b) != "merged:ours+theirs" {
			t.Errorf("finisher reads a.json = %q, %v", b, err)
		}
		tx.SetMeta(meta("merge"))
		return tx.PutRaw("conflicts/1.json", []byte("noted"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != gitstate.MergeMerged || res.Commit != tip(t, dir) {
		t.Fatalf("Merge = %+v, tip %s", res, tip(t, dir))
	}
	if !reflect.DeepEqual(res.Report.Resolved, []string{"a.json"}) || !reflect.DeepEqual(gotReport.Resolved, []string{"a.json"}) {
		t.Errorf("report %v / finisher got %v, want [a.json]", res.Report.Resolved, gotReport.Resolved)
	}
	parents := strings.Fields(gitstatetest.Git(t, dir, "rev-list", "--parents", "-n1", res.Commit))[1:]
	if want := []string{o.Hash, th.Hash}; !reflect.DeepEqual(parents, want) {
		t.Errorf("merge parents %v, want ours then theirs %v", parents, want)
	}
	msg := gitstatetest.Git(t, dir, "log", "-1", "--format=%B", res.Commit)
	wantClock := max(o.Clock, th.Clock) + 1
	if got := gitstate.ClockOf(msg); got != wantClock {
		t.Errorf("merge clock %d, want max(%d, %d)+1", got, o.Clock, th.Clock)
	}
	got, err := s.TreeFiles(gitstatetest.Git(t, dir, "rev-parse", res.Commit+"^{tree}"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"config/version.json": "{\n  \"n\": 1\n}\n",
		"a.json":              "merged:ours+theirs", "mine.json": "1", "yours.json": "2",
		"conflicts/1.json": "noted",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged state:\n got  %v\n want %v", got, want)
	}
	// both audit trails are in history
	log := gitstatetest.Git(t, dir, "rev-list", gitstate.RefState)
	for _, c := range []string{o.Hash, th.Hash} {
		if !strings.Contains(log, c) {
			t.Errorf("history lost %s", c)
		}
	}
	// clocks advance past everything seen
	next := putRaw(t, s, "next.json", "n")
	if next.Clock != wantClock+1 {
		t.Errorf("next commit's clock %d, want %d", next.Clock, wantClock+1)
	}
}

// TestMergeIsSymmetric: merging theirs into ours and ours into theirs
// writes the same tree (the commits differ: parents, committer time).
func TestMergeIsSymmetric(t *testing.T) {
	ctx := context.Background()
	s, dir := openInit(t)
	_, o, th := divergent(t, s, dir,
		[][]string{{"a.json", "x", "o.json", "o"}, {"d/1.json", "1"}},
		[][]string{{"a.json", "y"}, {"d/2.json", "2", "base.json", ""}})
	r := &testResolver{}
	m1, err := s.Merge(ctx, th.Hash, r.resolve, finishMeta)
	if err != nil {
		t.Fatal(err)
	}
	resetState(t, dir, th.Hash)
	m2, err := s.Merge(ctx, o.Hash, r.resolve, finishMeta)
	if err != nil {
		t.Fatal(err)
	}
	t1 := gitstatetest.Git(t, dir, "rev-parse", m1.Commit+"^{tree}")
	t2 := gitstatetest.Git(t, dir, "rev-parse", m2.Commit+"^{tree}")
	if m1.Status != gitstate.MergeMerged || m2.Status != gitstate.MergeMerged || t1 != t2 {
		t.Fatalf("merge(ours<-theirs) = %s %s, merge(theirs<-ours) = %s %s", m1.Status, t1, m2.Status, t2)
	}
}

func TestMergeFinishErrors(t *testing.T) {
	ctx := context.Background()
	s, dir := openInit(t)
	_, o, th := divergent(t, s, dir, [][]string{{"a.json", "x"}}, [][]string{{"b.json", "y"}})
	r := &testResolver{}
	boom := errors.New("boom")
	aborted := false
	_, err := s.Merge(ctx, th.Hash, r.resolve, func(tx *gitstate.Tx, _ gitstate.MergeReport) error {
		tx.OnAbort(func(context.Context) error { aborted = true; return nil })
		return boom
	})
	if !errors.Is(err, boom) || !aborted {
		t.Fatalf("finisher error: %v (abort hooks ran: %v)", err, aborted)
	}
	if _, err := s.Merge(ctx, th.Hash, r.resolve, func(*gitstate.Tx, gitstate.MergeReport) error { return nil }); !errors.Is(err, gitstate.ErrNoMeta) {
		t.Fatalf("finisher without metadata: %v, want ErrNoMeta", err)
	}
	if got := tip(t, dir); got != o.Hash {
		t.Fatalf("a failed merge moved the ref to %s", got)
	}
	if _, err := s.Merge(ctx, "refs/codex/remotes/nowhere/state", r.resolve, finishMeta); !errors.Is(err, gitstate.ErrNotFound) {
		t.Fatalf("merging a missing rev: %v, want ErrNotFound", err)
	}
}

// fetchState copies src's state into dst's refs/codex/remotes/<name>/state.
func fetchState(t *testing.T, dst, src, name string) string {
	t.Helper()
	ref := gitstate.RemoteStateRef(name)
	gitstatetest.Git(t, dst, "fetch", "-q", src, "+"+gitstate.RefState+":"+ref)
	return ref
}

func TestMergeAdoptsWhenNoLocalState(t *testing.T) {
	ctx := context.Background()
	_, src := openInit(t)
	dst := gitstatetest.NewRepo(t)
	s, err := gitstate.Open(dst, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ref := fetchState(t, dst, src, "origin")
	res, err := s.Merge(ctx, ref, (&testResolver{}).resolve, finishMeta)
	if err != nil {
		t.Fatal(err)
	}
	want := tip(t, src)
	if res.Status != gitstate.MergeFastForward || res.Commit != want || tip(t, dst) != want {
		t.Fatalf("Merge = %+v, tip %s; want the remote's %s adopted", res, tip(t, dst), want)
	}
}

// TestMergeUnrelatedHistories: two states initialised apart merge against
// the empty tree, in either direction to the same tree.
func TestMergeUnrelatedHistories(t *testing.T) {
	ctx := context.Background()
	sa, a := openInit(t)
	sb, b := openInit(t)
	putRaw(t, sa, "only-a.json", "a", "both.json", "from a")
	putRaw(t, sb, "only-b.json", "b", "both.json", "from b")
	putRaw(t, sb, "more-b.json", "b")
	// each fetches the other's state before either merges
	refB, refA := fetchState(t, a, b, "b"), fetchState(t, b, a, "a")
	r := &testResolver{}
	ma, err := sa.Merge(ctx, refB, r.resolve, finishMeta)
	if err != nil {
		t.Fatal(err)
	}
	callsA := r.take()
	mb, err := sb.Merge(ctx, refA, r.resolve, finishMeta)
	if err != nil {
		t.Fatal(err)
	}
	if ma.Status != gitstate.MergeMerged || mb.Status != gitstate.MergeMerged {
		t.Fatalf("statuses %s %s", ma.Status, mb.Status)
	}
	wantCalls := []resolveCall{{"both.json", "<nil>", "from a", "from b"}}
	if !reflect.DeepEqual(callsA, wantCalls) {
		t.Errorf("resolver calls %v, want %v", callsA, wantCalls)
	}
	ta := gitstatetest.Git(t, a, "rev-parse", gitstate.RefState+"^{tree}")
	tb := gitstatetest.Git(t, b, "rev-parse", gitstate.RefState+"^{tree}")
	if ta != tb {
		t.Fatalf("trees differ: %s vs %s", ta, tb)
	}
	got, _ := sa.TreeFiles(ta)
	for _, p := range []string{"only-a.json", "only-b.json", "more-b.json", "config/version.json"} {
		if _, ok := got[p]; !ok {
			t.Errorf("merged state lacks %s", p)
		}
	}
	if got["both.json"] != "merged:from a+from b" {
		t.Errorf("both.json = %q", got["both.json"])
	}
}

// TestMergeHoldsWriterLock: local transactions that run during a merge
// queue behind it and land on top of the merge commit; none is lost.
func TestMergeHoldsWriterLock(t *testing.T) {
	ctx := context.Background()
	s, dir := openInit(t)
	_, _, th := divergent(t, s, dir, [][]string{{"a.json", "x"}}, [][]string{{"b.json", "y"}})
	entered, release := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	var res gitstate.MergeResult
	var mergeErr error
	go func() {
		res, mergeErr = s.Merge(ctx, th.Hash, (&testResolver{}).resolve, func(tx *gitstate.Tx, _ gitstate.MergeReport) error {
			close(entered)
			<-release
			tx.SetMeta(meta("merge"))
			return nil
		})
		close(done)
	}()
	<-entered
	type written struct {
		c   gitstate.Commit
		err error
	}
	wrote := make(chan written)
	go func() {
		c, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(meta("put"))
			return tx.PutRaw("during.json", []byte("d"))
		})
		wrote <- written{c, err}
	}()
	time.Sleep(50 * time.Millisecond) // let the writer queue on the lock
	close(release)
	<-done
	w := <-wrote
	if mergeErr != nil || w.err != nil {
		t.Fatal(mergeErr, w.err)
	}
	c := w.c
	if c.Parent != res.Commit {
		t.Fatalf("the write during the merge has parent %s, want the merge %s", c.Parent, res.Commit)
	}
	got, _ := s.TreeFiles(gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState+"^{tree}"))
	for _, p := range []string{"a.json", "b.json", "during.json"} {
		if _, ok := got[p]; !ok {
			t.Errorf("state lacks %s", p)
		}
	}
}

// TestMergeWritesManyObjectsAsOnePack: a merge that rewrites many trees
// stores them as one pack (not hundreds of loose objects), and its commit as
// one more (every transaction writes one), which git reads and fsck
// accepts, and which a fresh Store reads too.
func TestMergeWritesManyObjectsAsOnePack(t *testing.T) {
	ctx := context.Background()
	s, dir := openInit(t)
	const dirs = 300
	var ours, theirs []string
	for i := 0; i < dirs; i++ {
		ours = append(ours, fmt.Sprintf("d/%03d/o.json", i), fmt.Sprint("o", i))
		theirs = append(theirs, fmt.Sprintf("d/%03d/t.json", i), fmt.Sprint("t", i))
	}
	_, _, th := divergent(t, s, dir, [][]string{ours}, [][]string{theirs})
	packs := func() int {
		m, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
		return len(m)
	}
	before := packs()
	res, err := s.Merge(ctx, th.Hash, (&testResolver{}).resolve, finishMeta)
	if err != nil || res.Status != gitstate.MergeMerged {
		t.Fatalf("Merge = %+v, %v", res, err)
	}
	if got := packs(); got != before+2 {
		t.Errorf("packs: %d before the merge, %d after; want two more (the trees, the commit)", before, got)
	}
	if out, err := gitstatetest.GitErr(dir, "fsck", "--strict", "--no-dangling"); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
	names := strings.Fields(gitstatetest.Git(t, dir, "ls-tree", "-r", "--name-only", gitstate.RefState, "d"))
	if len(names) != 2*dirs {
		t.Fatalf("git sees %d records under d/, want %d", len(names), 2*dirs)
	}
	fresh, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	n := 0
	err = fresh.View(ctx, func(sn *gitstate.Snapshot) error {
		return sn.Walk("d", func(string, []byte) error { n++; return nil })
	})
	if err != nil || n != 2*dirs {
		t.Fatalf("a fresh store walks %d records under d/ (%v), want %d", n, err, 2*dirs)
	}
	// the same store keeps working on top of the merge
	putRaw(t, s, "d/000/later.json", "l")
}

// TestMergeBaseCrissCross builds the history two machines make when each
// merges the other's tip at the same moment: M1 = merge(A1, B1) and
// M2 = merge(B1, A1). M1 and M2 then have two best common ancestors (A1 and
// B1), and the merge must pick the same one whichever side merges.
func TestMergeBaseCrissCross(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	env := []string{"GIT_AUTHOR_DATE=1700000000 +0000", "GIT_COMMITTER_DATE=1700000000 +0000"}
	commit := func(msg string, parents ...string) string {
		args := []string{"commit-tree", "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "-m", msg}
		for _, p := range parents {
			args = append(args, "-p", p)
		}
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("commit-tree %s: %v", msg, err)
		}
		return strings.TrimSpace(string(out))
	}
	base := commit("base")
	a1, b1 := commit("a1", base), commit("b1", base)
	m1, m2 := commit("m1", a1, b1), commit("m2", b1, a1)
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	x, err := st.MergeBase(ctx, m1, m2)
	if err != nil {
		t.Fatal(err)
	}
	y, err := st.MergeBase(ctx, m2, m1)
	if err != nil {
		t.Fatal(err)
	}
	if x != y || (x != a1 && x != b1) {
		t.Errorf("merge base of (m1, m2) = %s, of (m2, m1) = %s; want the same one of %s, %s", x, y, a1, b1)
	}
}

// TestMergeFinishSeesBothSides: the finisher of either direction of a
// merge gets the three versions of each resolved record, ours and theirs
// swapped, so it can see what each side claimed.
func TestMergeFinishSeesBothSides(t *testing.T) {
	ctx := context.Background()
	s, dir := openInit(t)
	_, o, th := divergent(t, s, dir, [][]string{{"a.json", "x"}}, [][]string{{"a.json", "y"}})
	var got []gitstate.Sides
	finish := func(tx *gitstate.Tx, report gitstate.MergeReport) error {
		got = append(got, report.Sides["a.json"])
		tx.SetMeta(meta("merge"))
		return nil
	}
	r := &testResolver{}
	if _, err := s.Merge(ctx, th.Hash, r.resolve, finish); err != nil {
		t.Fatal(err)
	}
	resetState(t, dir, th.Hash)
	if _, err := s.Merge(ctx, o.Hash, r.resolve, finish); err != nil {
		t.Fatal(err)
	}
	s0, s1 := got[0], got[1]
	if s0.Base != nil || string(s0.Ours) != "x" || string(s0.Theirs) != "y" || string(s1.Ours) != "y" || string(s1.Theirs) != "x" {
		t.Errorf("sides %q/%q/%q and %q/%q/%q", s0.Base, s0.Ours, s0.Theirs, s1.Base, s1.Ours, s1.Theirs)
	}
}

func TestDeriveID(t *testing.T) {
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	a, b := gitstate.DeriveID("m", at, "x", "y"), gitstate.DeriveID("m", at, "x", "y")
	if a != b {
		t.Errorf("same inputs, ids %s and %s", a, b)
	}
	// the seed parts are separated: ("x","y") is not ("xy") or ("x","y","")
	for _, other := range [][]string{{"xy"}, {"x", "y", ""}, {"y", "x"}} {
		if gitstate.DeriveID("m", at, other...) == a {
			t.Errorf("seed %q gives the same id as (x, y)", other)
		}
	}
	// shaped and ordered like NewID's
	n := gitstate.NewID("m", at)
	if len(a) != len(n) || a[:12] != n[:12] {
		t.Errorf("DeriveID %s does not share NewID's shape and time prefix %s", a, n)
	}
}

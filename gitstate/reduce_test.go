package gitstate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestReduceReadsOnlyWhatChanged: Reduce joins every record under a
// directory; a second Reduce of a later state reads only the records of
// the directories that changed (the others' parts are remembered by tree
// id), and gives what reading every record gives. A transaction that
// wrote under the directory sees its writes.
func TestReduceReadsOnlyWhatChanged(t *testing.T) {
	s, _ := openInit(t)
	ctx := context.Background()
	put := func(paths ...string) {
		t.Helper()
		_, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(meta("put"))
			for _, p := range paths {
				if err := tx.Put(p, rec{N: 1}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var paths []string
	for i := 0; i < 40; i++ {
		paths = append(paths, fmt.Sprintf("d/%d/%d/r%d.json", i%4, i%8, i))
	}
	put(paths...)
	leaves := 0
	sum := gitstate.Reduction{
		Name: "test.sum",
		Leaf: func(p string, data []byte) (any, error) {
			leaves++
			var r rec
			return r.N, json.Unmarshal(data, &r)
		},
		Join: func(parts []any) any {
			n := 0
			for _, p := range parts {
				n += p.(int)
			}
			return n
		},
	}
	reduce := func(want int) {
		t.Helper()
		err := s.View(ctx, func(sn *gitstate.Snapshot) error {
			v, err := sn.Reduce("d", sum)
			if err != nil {
				return err
			}
			if v.(int) != want {
				t.Errorf("sum %d, want %d", v, want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	reduce(40)
	if leaves != 40 {
		t.Fatalf("first reduce read %d records, want 40", leaves)
	}
	leaves = 0
	reduce(40)
	if leaves != 0 {
		t.Fatalf("reduce of the same state read %d records, want 0", leaves)
	}
	put("d/1/5/new.json") // beside r5, r13, r21, r29 and r37
	leaves = 0
	reduce(41)
	if leaves != 6 {
		t.Fatalf("reduce after one write read %d records, want the 6 of its directory", leaves)
	}
	_, err := s.Update(ctx, func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("put"))
		if err := tx.Put("d/0/0/more.json", rec{N: 10}); err != nil {
			return err
		}
		if err := tx.Delete("d/1/5/new.json"); err != nil {
			return err
		}
		v, err := tx.Reduce("d", sum)
		if err == nil && v.(int) != 50 {
			t.Errorf("a transaction's reduce: %d, want 50 (its own writes)", v)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	reduce(50)
	err = s.View(ctx, func(sn *gitstate.Snapshot) error {
		v, err := sn.Reduce("nothing/here", sum)
		if err == nil && v.(int) != 0 {
			t.Errorf("reduce of a missing directory: %v", v)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReduceKeepsPartsForTheNextProcess: a reduction with KeepParts
// leaves its parts in .git/codex/reduced/<name>.json; another Store of
// the repository (another process) reduces the same state without reading
// a record, and a later state reading only the subdirectories that
// changed, with the same answer.
func TestReduceKeepsPartsForTheNextProcess(t *testing.T) {
	s, dir := openInit(t)
	ctx := context.Background()
	put := func(st *gitstate.Store, paths ...string) {
		t.Helper()
		_, err := st.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(meta("put"))
			for _, p := range paths {
				if err := tx.Put(p, rec{N: 1}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var paths []string
	for i := 0; i < 40; i++ {
		paths = append(paths, fmt.Sprintf("d/%d/%d/r%d.json", i%4, i%8, i))
	}
	put(s, paths...)
	leaves := 0
	sum := gitstate.Reduction{
		Name: "test.kept",
		Leaf: func(p string, data []byte) (any, error) {
			leaves++
			var r rec
			return r.N, json.Unmarshal(data, &r)
		},
		Join: func(parts []any) any {
			n := 0
			for _, p := range parts {
				n += p.(int)
			}
			return n
		},
		Keep: &gitstate.KeepParts{
			Encode: func(part any) ([]byte, error) { return json.Marshal(part) },
			Decode: func(data []byte) (any, error) {
				var n int
				err := json.Unmarshal(data, &n)
				return n, err
			},
		},
	}
	reduceIn := func(st *gitstate.Store, want int) {
		t.Helper()
		err := st.View(ctx, func(sn *gitstate.Snapshot) error {
			v, err := sn.Reduce("d", sum)
			if err == nil && v.(int) != want {
				t.Errorf("sum %d, want %d", v, want)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	open := func() *gitstate.Store {
		st, err := gitstate.Open(dir, gitstate.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	reduceIn(s, 40)
	if leaves != 40 {
		t.Fatalf("first reduce read %d records, want 40", leaves)
	}
	leaves = 0
	reduceIn(open(), 40)
	if leaves != 0 {
		t.Fatalf("another store's reduce of the same state read %d records, want 0", leaves)
	}
	put(s, "d/1/5/new.json") // d/1 holds 10 records, and now this one
	leaves = 0
	reduceIn(open(), 41)
	if leaves != 11 {
		t.Fatalf("another store's reduce after one write read %d records, want the 11 of d/1", leaves)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "codex", "reduced", "test.kept.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	leaves = 0
	reduceIn(open(), 41)
	if leaves != 41 {
		t.Fatalf("a reduce beside a kept file that is not one read %d records, want all 41", leaves)
	}
}

// TestReduceBesideWritersAndReaders: goroutines reducing the same
// directory while a writer adds records each see a sum that some state
// had, and, once the writer is done, the last one's.
func TestReduceBesideWritersAndReaders(t *testing.T) {
	s, _ := openInit(t)
	ctx := context.Background()
	count := gitstate.Reduction{
		Name: "test.count",
		Leaf: func(string, []byte) (any, error) { return 1, nil },
		Join: func(parts []any) any {
			n := 0
			for _, p := range parts {
				n += p.(int)
			}
			return n
		},
	}
	const writes = 30
	done := make(chan struct{})
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func() {
			last := 0
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				err := s.View(ctx, func(sn *gitstate.Snapshot) error {
					v, err := sn.Reduce("d", count)
					if err == nil && (v.(int) < last || v.(int) > writes) {
						err = fmt.Errorf("count %d after %d", v, last)
					}
					if err == nil {
						last = v.(int)
					}
					return err
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := 0; i < writes; i++ {
		_, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(meta("put"))
			return tx.Put(fmt.Sprintf("d/%d/%d/r%d.json", i%3, i%5, i), rec{N: i})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	for g := 0; g < 4; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	err := s.View(ctx, func(sn *gitstate.Snapshot) error {
		v, err := sn.Reduce("d", count)
		if err == nil && v.(int) != writes {
			t.Errorf("count %d, want %d", v, writes)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReduceByNames: a Reduction with Names is given each record's path
// and nil data, and reads no record's blob: it reduces a state whose
// record's blob git does not have (a tree made by hand that names one),
// where the same Reduction reading data fails. A transaction's Reduce of
// its own writes, which walks them whole, gives its Leaf nil too.
func TestReduceByNames(t *testing.T) {
	s, dir := openInit(t)
	ctx := context.Background()
	_, err := s.Update(ctx, func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("put"))
		for i := range 6 {
			if err := tx.Put(fmt.Sprintf("d/%d/r%d.json", i%2, i), rec{N: i}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	count := func(names bool) gitstate.Reduction {
		return gitstate.Reduction{
			Name:  fmt.Sprintf("test.names.%v", names),
			Names: names,
			Leaf: func(p string, data []byte) (any, error) {
				if names && data != nil {
					t.Errorf("%s: Leaf given %d bytes with Names", p, len(data))
				}
				got = append(got, p)
				return 1, nil
			},
			Join: func(parts []any) any { return len(parts) },
		}
	}
	// a transaction that wrote under d reduces its own view whole
	_, err = s.Update(ctx, func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("put"))
		if err := tx.Put("d/0/r6.json", rec{N: 6}); err != nil {
			return err
		}
		got = nil
		_, err := tx.Reduce("d", count(true))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 7 {
		t.Errorf("a transaction's Reduce by names: Leaf of %v, want the 7 records", got)
	}

	// a record whose blob is nowhere: d/1/gone.json
	gitIdx := gitstatetest.IndexGit(t, dir)
	gitIdx("read-tree", gitstate.RefState)
	gitIdx("update-index", "--add", "--info-only", "--cacheinfo", "100644,1111111111111111111111111111111111111111,d/1/gone.json")
	tree := gitIdx("write-tree", "--missing-ok")
	commit := gitIdx("commit-tree", tree, "-p", gitstate.RefState, "-m", "by hand")
	gitIdx("update-ref", gitstate.RefState, commit)

	err = s.View(ctx, func(sn *gitstate.Snapshot) error {
		if _, err := sn.Reduce("d", count(false)); err == nil {
			t.Errorf("a Reduction that reads data read a blob git does not have")
		}
		got = nil
		_, err := sn.Reduce("d", count(true))
		return err
	})
	if err != nil {
		t.Fatalf("by names: %v", err)
	}
	want := []string{"d/0/r0.json", "d/0/r2.json", "d/0/r4.json", "d/0/r6.json", "d/1/gone.json", "d/1/r1.json", "d/1/r3.json", "d/1/r5.json"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("by names, Leaf of %v, want %v", got, want)
	}

}

package gitstate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
)

// TestReduceKeepsDeepPartsForTheNextProcess: with KeepParts.Depth a
// reduction keeps every level's parts and each directory's records (by
// name and blob id) in .git/codex/reduced/<name>.parts; another Store (a
// process) reduces the same state reading no record, and after a write
// reads only the records that changed, however deep; a past state
// (ReadOnly) reads what it does not share with the kept one and leaves
// the file as it was; Every holds a process's rewrites back.
func TestReduceKeepsDeepPartsForTheNextProcess(t *testing.T) {
	s, dir := openInit(t)
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
	for i := 0; i < 64; i++ {
		paths = append(paths, fmt.Sprintf("d/%d/%d/%d/r%d.json", i%2, i%4, i%8, i))
	}
	put(paths...)
	var first string
	if err := s.View(ctx, func(sn *gitstate.Snapshot) error { first = sn.Commit(); return nil }); err != nil {
		t.Fatal(err)
	}
	leaves := 0
	sum := func(readOnly bool, every time.Duration) gitstate.Reduction {
		return gitstate.Reduction{
			Name: "test.deep",
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
				Encode:   func(part any) ([]byte, error) { return json.Marshal(part) },
				Decode:   func(data []byte) (any, error) { var n int; err := json.Unmarshal(data, &n); return n, err },
				Depth:    3,
				Every:    every,
				ReadOnly: readOnly,
			},
		}
	}
	file := filepath.Join(dir, ".git", "codex", "reduced", "test.deep.parts")
	// reduce reduces the state at at ("" the tip) in st, or in a new store
	reduce := func(st *gitstate.Store, at string, r gitstate.Reduction, want, wantLeaves int) {
		t.Helper()
		if st == nil {
			var err error
			if st, err = gitstate.Open(dir, gitstate.Options{}); err != nil {
				t.Fatal(err)
			}
			defer st.Close()
		}
		leaves = 0
		err := st.ViewAt(ctx, at, func(sn *gitstate.Snapshot) error {
			v, err := sn.Reduce("d", r)
			if err == nil && v.(int) != want {
				t.Errorf("sum %d, want %d", v, want)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if leaves != wantLeaves {
			t.Errorf("read %d records, want %d", leaves, wantLeaves)
		}
	}
	reduce(s, "", sum(false, 0), 64, 64)
	if _, err := os.Stat(file); err != nil {
		t.Fatal(err)
	}
	reduce(nil, "", sum(false, 0), 64, 0)

	put("d/1/3/7/new.json") // beside 8 records, three levels down
	reduce(nil, "", sum(false, 0), 65, 1)
	reduce(nil, "", sum(false, 0), 65, 0)

	// a record rewritten (another blob) is read again; its neighbours not
	_, err := s.Update(ctx, func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("put"))
		return tx.Put("d/1/3/7/r7.json", rec{N: 10})
	})
	if err != nil {
		t.Fatal(err)
	}
	reduce(nil, "", sum(false, 0), 74, 1)

	// the first state: the directories it shares with the tip from the
	// file, and of d/1/3/7, which it does not, r7.json as it was then (the
	// file has its later blob), not its 7 others; the file left as the
	// tip's
	kept, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	reduce(nil, first, sum(true, 0), 64, 1)
	if now, _ := os.ReadFile(file); string(now) != string(kept) {
		t.Error("a read-only reduce of a past state rewrote the kept parts")
	}
	reduce(nil, "", sum(false, 0), 74, 0)

	// a temporary file a killed writer left is removed at the next write,
	// one a writer may still be writing is not
	stale, fresh := file+".123.tmp", file+".456.tmp"
	for _, f := range []string{stale, fresh} {
		if err := os.WriteFile(f, []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	put("d/0/1/1/c.json")
	reduce(nil, "", sum(false, 0), 75, 1)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a stale temporary file stays: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a recent temporary file was removed: %v", err)
	}

	// Every: a process writes at its first reduce that made a part, and
	// not again within Every
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	put("d/0/0/0/a.json")
	reduce(st, "", sum(false, time.Hour), 76, 1)
	put("d/0/0/0/b.json")
	reduce(st, "", sum(false, time.Hour), 77, 1)
	reduce(nil, "", sum(false, 0), 77, 1) // the file has a.json's state, not b.json's
}

// TestReduceKeptDeepBesideWritersAndReaders: goroutines of one store
// reducing with a deep keep (each rewriting the file) while a writer adds
// records, and two other stores (processes) reading that file meanwhile,
// each see a count some state had; once the writer is done, a new store
// gives the last state's count from the file, reading no record.
func TestReduceKeptDeepBesideWritersAndReaders(t *testing.T) {
	s, dir := openInit(t)
	ctx := context.Background()
	leaves := make(chan struct{}, 1<<16)
	count := gitstate.Reduction{
		Name: "test.deepcount",
		Leaf: func(string, []byte) (any, error) { leaves <- struct{}{}; return 1, nil },
		Join: func(parts []any) any {
			n := 0
			for _, p := range parts {
				n += p.(int)
			}
			return n
		},
		Keep: &gitstate.KeepParts{
			Encode: func(part any) ([]byte, error) { return json.Marshal(part) },
			Decode: func(data []byte) (any, error) { var n int; err := json.Unmarshal(data, &n); return n, err },
			Depth:  3,
		},
	}
	const writes = 30
	done := make(chan struct{})
	errs := make(chan error, 6)
	for g := 0; g < 6; g++ {
		st := s
		if g >= 4 {
			var err error
			if st, err = gitstate.Open(dir, gitstate.Options{}); err != nil {
				t.Fatal(err)
			}
			defer st.Close()
		}
		go func() {
			last := 0
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				err := st.View(ctx, func(sn *gitstate.Snapshot) error {
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
			return tx.Put(fmt.Sprintf("d/%d/%d/%d/r%d.json", i%2, i%3, i%5, i), rec{N: i})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	for g := 0; g < 6; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// one more record, reduced by the first store alone: its parts are
	// the file's (the other stores' writes, which may have come after
	// the first's, were of older states: never wrong, only of less use)
	_, err := s.Update(ctx, func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("put"))
		return tx.Put("d/0/0/0/last.json", rec{N: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.View(ctx, func(sn *gitstate.Snapshot) error { _, err := sn.Reduce("d", count); return err }); err != nil {
		t.Fatal(err)
	}
	for len(leaves) > 0 {
		<-leaves
	}
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.View(ctx, func(sn *gitstate.Snapshot) error {
		v, err := sn.Reduce("d", count)
		if err == nil && v.(int) != writes+1 {
			t.Errorf("count %d, want %d", v, writes+1)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(leaves); n != 0 {
		t.Errorf("a new store read %d records beside the kept parts, want none", n)
	}
}

// TestReadKeptReadsWhatReadDoes: ReadKept, which walks the trees a deep
// keep holds where they are the snapshot's, gives Read's bytes and errors:
// in a new store that loaded the file, for a record the keep holds, one
// rewritten since (its directory's tree is not the kept one), one added
// since, a past state's, a missing one and a directory.
func TestReadKeptReadsWhatReadDoes(t *testing.T) {
	s, dir := openInit(t)
	ctx := context.Background()
	put := func(p string, n int) {
		t.Helper()
		_, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(meta("put"))
			return tx.Put(p, rec{N: n})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 12; i++ {
		put(fmt.Sprintf("d/%d/%d/r%d.json", i%2, i%3, i), i)
	}
	var first string
	if err := s.View(ctx, func(sn *gitstate.Snapshot) error { first = sn.Commit(); return nil }); err != nil {
		t.Fatal(err)
	}
	count := gitstate.Reduction{
		Name: "test.readkept",
		Leaf: func(string, []byte) (any, error) { return 1, nil },
		Join: func(parts []any) any { return len(parts) },
		Keep: &gitstate.KeepParts{
			Encode: func(part any) ([]byte, error) { return json.Marshal(part) },
			Decode: func(data []byte) (any, error) { var n int; err := json.Unmarshal(data, &n); return n, err },
			Depth:  2,
		},
	}
	if err := s.View(ctx, func(sn *gitstate.Snapshot) error { _, err := sn.Reduce("d", count); return err }); err != nil {
		t.Fatal(err)
	}
	put("d/1/1/r1.json", 100) // rewritten
	put("d/0/2/new.json", 5)  // added
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, at := range []string{"", first} {
		err := st.ViewAt(ctx, at, func(sn *gitstate.Snapshot) error {
			r := count
			if at != "" { // the past state as the page reads it: the keep holds the tip's trees
				keep := *count.Keep
				keep.ReadOnly = true
				r.Keep = &keep
			}
			if _, err := sn.Reduce("d", r); err != nil { // loads the file
				return err
			}
			for _, p := range []string{"d/0/0/r0.json", "d/1/1/r1.json", "d/0/2/new.json", "d/1/2/r5.json", "d/0/0/none.json", "d/0/0", "d/9/9/r.json"} {
				want, werr := sn.Read(p)
				got, gerr := sn.ReadKept(count, "d", p)
				if string(got) != string(want) || (gerr == nil) != (werr == nil) || errors.Is(gerr, gitstate.ErrNotFound) != errors.Is(werr, gitstate.ErrNotFound) {
					t.Errorf("at %q, %s: ReadKept %q, %v; Read %q, %v", at, p, got, gerr, want, werr)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

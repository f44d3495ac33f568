package gitstate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
)

// TestReducePastStateKeepsItsParts: a past state's reduce
// (KeepParts.ReadOnly, the page's ?at=) keeps what it made afresh in
// <name>.past.parts, apart from the tip's file, which it leaves as it
// was; the next store (a process) reduces that state reading no record
// and no tree, and a state beside it only the records neither file has
// (matched by name and blob: a record rewritten since has one name in
// both files, with other blobs) and the directories that hold them. A
// damaged past file, or the tip's in its place, is not used, and is
// replaced.
func TestReducePastStateKeepsItsParts(t *testing.T) {
	s, dir := openInit(t)
	ctx := context.Background()
	put := func(n int, paths ...string) string {
		t.Helper()
		c, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(meta("put"))
			for _, p := range paths {
				if err := tx.Put(p, rec{N: n}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return c.Hash
	}
	var paths []string
	for i := 0; i < 64; i++ {
		paths = append(paths, fmt.Sprintf("d/%d/%d/%d/r%d.json", i%2, i%4, i%8, i))
	}
	first := put(1, paths...)
	mid := put(10, "d/1/3/7/r7.json")              // 73
	put(20, "d/1/3/7/r7.json", "d/1/3/7/new.json") // 103
	// leaves counts the records read, joins the directories reduced
	// afresh (whose trees were read)
	leaves, joins := 0, 0
	sum := func(readOnly bool) gitstate.Reduction {
		return gitstate.Reduction{
			Name: "test.past",
			Leaf: func(p string, data []byte) (any, error) {
				leaves++
				var r rec
				return r.N, json.Unmarshal(data, &r)
			},
			Join: func(parts []any) any {
				joins++
				n := 0
				for _, p := range parts {
					n += p.(int)
				}
				return n
			},
			Keep: &gitstate.KeepParts{
				Encode:   func(part any) ([]byte, error) { return json.Marshal(part) },
				Decode:   func(data []byte) (any, error) { var n int; err := json.Unmarshal(data, &n); return n, err },
				Depth:    4,
				ReadOnly: readOnly,
			},
		}
	}
	reduced := filepath.Join(dir, ".git", "codex", "reduced")
	tipFile, pastFile := filepath.Join(reduced, "test.past.parts"), filepath.Join(reduced, "test.past.past.parts")
	// reduce reduces the state at at ("" the tip) in a new store
	reduce := func(when, at string, want, wantLeaves, wantJoins int) {
		t.Helper()
		st, err := gitstate.Open(dir, gitstate.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		leaves, joins = 0, 0
		err = st.ViewAt(ctx, at, func(sn *gitstate.Snapshot) error {
			v, err := sn.Reduce("d", sum(at != ""))
			if err == nil && v.(int) != want {
				t.Errorf("%s: sum %d, want %d", when, v, want)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if leaves != wantLeaves || joins != wantJoins {
			t.Errorf("%s: read %d records and %d directories, want %d and %d", when, leaves, joins, wantLeaves, wantJoins)
		}
	}
	reduce("the tip", "", 103, 65, 15)
	tipKept, err := os.ReadFile(tipFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(pastFile); !os.IsNotExist(err) {
		t.Fatalf("the tip's reduce kept a past file: %v", err)
	}

	// the first state: r7 as it was then, read once; then from its file
	reduce("the first state", first, 64, 1, 4)
	if _, err := os.Stat(pastFile); err != nil {
		t.Fatalf("a past state's reduce kept no file: %v", err)
	}
	reduce("the first state again", first, 64, 0, 0)
	// mid's r7 is in neither file (the tip's has its later blob, the
	// past one its earlier, under the same name); its neighbours are
	reduce("the state between", mid, 73, 1, 4)
	reduce("the state between again", mid, 73, 0, 0)
	// the past file holds each directory's last past tree read afresh:
	// mid's now, from d down to d/1/3/7
	reduce("the first state after the other", first, 64, 1, 4)
	reduce("the tip after the past states", "", 103, 0, 0)
	if now, _ := os.ReadFile(tipFile); !bytes.Equal(now, tipKept) {
		t.Error("a past state's reduce rewrote the tip's kept parts")
	}

	// damaged: not used (its records read again), and replaced
	good, err := os.ReadFile(pastFile)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(good)
	bad[len(bad)/2] ^= 1
	if err := os.WriteFile(pastFile, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	reduce("a damaged past file", first, 64, 1, 4)
	if now, _ := os.ReadFile(pastFile); bytes.Equal(now, bad) {
		t.Error("a damaged past file was not replaced")
	}
	reduce("the replaced past file", first, 64, 0, 0)
	// the tip's file cannot stand for the past one (its name says whose)
	if err := os.WriteFile(pastFile, tipKept, 0o644); err != nil {
		t.Fatal(err)
	}
	reduce("the tip's file as the past one", first, 64, 1, 4)

	// goroutines of one store reducing past states at once, each writing
	// the file aside; Close waits for the writes, and the file left is
	// whole and serves the states it was written of
	os.Remove(pastFile)
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		at, want := []string{first, mid}[g%2], []int{64, 73}[g%2]
		go func() {
			errs <- st.ViewAt(ctx, at, func(sn *gitstate.Snapshot) error {
				r := sum(true)
				r.Leaf = func(p string, data []byte) (any, error) { var r rec; return r.N, json.Unmarshal(data, &r) }
				r.Join = func(parts []any) any {
					n := 0
					for _, p := range parts {
						n += p.(int)
					}
					return n
				}
				v, err := sn.Reduce("d", r)
				if err == nil && v.(int) != want {
					err = fmt.Errorf("sum %d, want %d", v, want)
				}
				return err
			})
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	good, err = os.ReadFile(pastFile)
	if err != nil {
		t.Fatalf("Close left no past file: %v", err)
	}
	found := map[string]int{}
	for _, at := range []string{first, mid} {
		if err := os.WriteFile(pastFile, good, 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := gitstate.Open(dir, gitstate.Options{})
		if err != nil {
			t.Fatal(err)
		}
		leaves, joins = 0, 0
		err = st.ViewAt(ctx, at, func(sn *gitstate.Snapshot) error {
			v, err := sn.Reduce("d", sum(true))
			if err == nil && v.(int) != map[string]int{first: 64, mid: 73}[at] {
				t.Errorf("%.7s from the goroutines' file: sum %d", at, v)
			}
			return err
		})
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		if leaves > 1 || joins > 4 {
			t.Errorf("%.7s from the goroutines' file: read %d records and %d directories, more than with none", at, leaves, joins)
		}
		found[at] = 4 - joins
	}
	// the file written last holds the state its writer merged last, at
	// least its top directory: that state is read from it whole
	if found[first] != 4 && found[mid] != 4 {
		t.Errorf("the goroutines' file served %d of the first state's 4 directories and %d of the other's; want one state's 4", found[first], found[mid])
	}
}

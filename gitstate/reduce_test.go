package gitstate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
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

package gitstate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
)

// TestWalkHandsOnInPathOrder: Walk reads a window of records at a time in
// the order of their ids (snapshot.go, readInHashOrder) but hands each on
// in path order with its own bytes, past the first window too.
func TestWalkHandsOnInPathOrder(t *testing.T) {
	s, _ := openInit(t)
	ctx := context.Background()
	const n = 4096 + 300
	_, err := s.Update(ctx, func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("put"))
		for i := 0; i < n; i++ {
			if err := tx.Put(fmt.Sprintf("w/%d/%d/r%05d.json", i%7, i%13, i), rec{N: i}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	err = s.View(ctx, func(sn *gitstate.Snapshot) error {
		return sn.Walk("w", func(p string, data []byte) error {
			var r rec
			if err := json.Unmarshal(data, &r); err != nil {
				return err
			}
			if want := fmt.Sprintf("w/%d/%d/r%05d.json", r.N%7, r.N%13, r.N); p != want {
				t.Fatalf("%s holds record %d", p, r.N)
			}
			paths = append(paths, p)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != n || !sort.StringsAreSorted(paths) {
		t.Fatalf("walked %d records (want %d), in path order: %v", len(paths), n, sort.StringsAreSorted(paths))
	}
}

package gitstate

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

func lazyTestWrite(t *testing.T, s *Store, path string) {
	t.Helper()
	_, err := s.Update(context.Background(), func(tx *Tx) error {
		tx.SetMeta(Meta{Summary: "write " + path, Trailers: []Trailer{{Key: TrailerTool, Value: "test_write"}}})
		return tx.PutRaw(path, []byte(path+"\n"))
	})
	if err != nil {
		t.Fatal(err)
	}
}

func openedPacks(s *Store) (opened, known int) {
	s.objMu.Lock()
	defer s.objMu.Unlock()
	return s.objects.PackCounts()
}

// TestPacksOpenedOnDemand: a store that finds the packs another writer made
// since its last look maps only those holding what it reads, yet every
// record stays readable, including from packs a repack replaced meanwhile.
func TestPacksOpenedOnDemand(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	ctx := context.Background()
	a, err := Open(dir, Options{PackEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Init(ctx, func(tx *Tx) error {
		tx.SetMeta(Meta{Summary: "init", Trailers: []Trailer{{Key: TrailerTool, Value: "init"}}})
		return tx.PutRaw("a/first", []byte("first\n"))
	}); err != nil {
		t.Fatal(err)
	}
	if err := a.View(ctx, func(sn *Snapshot) error { _, err := sn.Read("a/first"); return err }); err != nil {
		t.Fatal(err)
	}
	// another writer (its own Store, as another process has) writes ten
	// transactions: ten packs, fewer than start a repack
	b, err := Open(dir, Options{PackEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i := 0; i < 10; i++ {
		lazyTestWrite(t, b, fmt.Sprintf("b/%d", i))
	}
	// reading the tip's newest record maps the newest pack only
	before, _ := openedPacks(a)
	if err := a.View(ctx, func(sn *Snapshot) error { _, err := sn.Read("b/9"); return err }); err != nil {
		t.Fatal(err)
	}
	opened, known := openedPacks(a)
	if known < 11 || opened-before > 2 {
		t.Errorf("after reading the tip: %d of %d packs mapped (%d before), want at most 2 more", opened, known, before)
	}
	// every record is still found, each from its own pack
	if err := a.View(ctx, func(sn *Snapshot) error {
		for i := 0; i < 10; i++ {
			if b, err := sn.Read(fmt.Sprintf("b/%d", i)); err != nil || string(b) != fmt.Sprintf("b/%d\n", i) {
				return fmt.Errorf("b/%d = %q, %v", i, b, err)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// b writes on and git repacks everything; a, which knows the packs by
	// name but has mapped few, still reads everything (it rescans)
	for i := 10; i < 40; i++ {
		lazyTestWrite(t, b, fmt.Sprintf("b/%d", i))
	}
	gitstatetest.WaitForMaintenance(t, dir)
	gitstatetest.Git(t, dir, "repack", "-a", "-d", "-q")
	if err := a.View(ctx, func(sn *Snapshot) error {
		for i := 0; i < 40; i++ {
			if _, err := sn.Read(fmt.Sprintf("b/%d", i)); err != nil {
				return fmt.Errorf("b/%d: %v", i, err)
			}
		}
		_, err := sn.Read("a/first")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	lazyTestWrite(t, a, "a/second")
	if out, err := gitstatetest.GitErr(dir, "fsck", "--full", "--no-dangling"); err != nil || strings.Contains(out, "error") || strings.Contains(out, "missing") {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
}

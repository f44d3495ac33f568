package gitstate_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// A multi-pack-index naming packs that are gone (what a person's `git
// repack -d --write-midx` racing the store's repack leaves, made here by
// hand: the index of before a repack put back after it) is repaired by
// the next write, as git's repack would clear it: git reads every object
// again, and `git multi-pack-index verify` is clean. (git 2.39's own
// `git multi-pack-index write` carries the missing packs over.)
func TestStaleMultiPackIndexRepaired(t *testing.T) {
	dir := newStateRepo(t)
	staleMidx(t, dir)
	writeOne(t, dir, "after/x.json")
	checkMidxRepaired(t, dir)
}

// A sync repairs it before git reads the objects it pushes: with the stale
// index git's pack-objects could not read them.
func TestSyncRepairsStaleMultiPackIndex(t *testing.T) {
	dir := newStateRepo(t)
	origin := filepath.Join(t.TempDir(), "origin.git")
	gitstatetest.Git(t, filepath.Dir(origin), "init", "-q", "--bare", origin)
	gitstatetest.Git(t, dir, "remote", "add", "origin", origin)
	staleMidx(t, dir)
	s, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Sync(context.Background(), "origin", syncOpts()); err != nil {
		t.Fatalf("sync beside a stale multi-pack-index: %v", err)
	}
	checkMidxRepaired(t, dir)
	if out, err := gitstatetest.GitErr(origin, "fsck", "--strict", "--no-dangling"); err != nil {
		t.Fatalf("the remote's git fsck: %v\n%s", err, out)
	}
}

// staleMidx makes the repository's multi-pack-index name packs that are
// gone: the index of four packs, put back after git's repack replaced them
// with one.
func staleMidx(t *testing.T, dir string) {
	t.Helper()
	common := filepath.Join(dir, ".git")
	for i := 0; i < 4; i++ {
		writeOne(t, dir, "before/"+string(rune('a'+i))+".json")
	}
	gitstatetest.Git(t, dir, "multi-pack-index", "write")
	midx := filepath.Join(common, "objects", "pack", "multi-pack-index")
	old, err := os.ReadFile(midx)
	if err != nil {
		t.Fatal(err)
	}
	if gone, named := midxPacksGone(t, common); len(gone) != 0 || named < 4 {
		t.Fatalf("a fresh index names %d packs, %d gone", named, len(gone))
	}
	// git's repack writes one pack and an index without the old packs,
	// then deletes them; the old index comes back, as the race leaves it
	gitstatetest.Git(t, dir, "repack", "-a", "-d", "-q", "--write-midx")
	if err := os.WriteFile(midx, old, 0o444); err != nil {
		t.Fatal(err)
	}
	if gone, _ := midxPacksGone(t, common); len(gone) == 0 {
		t.Fatal("the old index names no pack that is gone: the test makes no stale index")
	}
	if out, err := gitstatetest.GitErr(dir, "multi-pack-index", "verify"); err == nil {
		t.Fatalf("git multi-pack-index verify passes a stale index:\n%s", out)
	}
}

// checkMidxRepaired waits for the store's maintenance and checks that the
// multi-pack-index names only packs that are there and git reads all.
func checkMidxRepaired(t *testing.T, dir string) {
	t.Helper()
	common := filepath.Join(dir, ".git")
	if err := gitstatetest.WaitForLocks(common); err != nil {
		t.Fatal(err)
	}
	if gone, named := midxPacksGone(t, common); len(gone) != 0 || named == 0 {
		t.Fatalf("after a write the index names %d packs, %v gone; want it written afresh", named, gone)
	}
	for _, args := range [][]string{{"multi-pack-index", "verify"}, {"fsck", "--full", "--strict", "--no-dangling"}} {
		if out, err := gitstatetest.GitErr(dir, args...); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if recs := tipRecords(t, dir); len(recs) < 5 {
		t.Fatalf("the tip holds %d records, want every write", len(recs))
	}
}

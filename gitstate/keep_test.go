package gitstate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestKeepProtectsPackUntilRefMoves: between writing its pack and moving
// the ref, a transaction's objects are reachable from nothing. git repack
// -a -d and git prune run in that window (with nothing to expire left:
// --expire=now) must not delete them: the pack carries a .keep until the
// ref has moved, as receive-pack's incoming packs do. Afterwards no .keep
// is left and the repository is whole.
func TestKeepProtectsPackUntilRefMoves(t *testing.T) {
	for _, maint := range [][]string{
		{"repack", "-a", "-d", "-q"},
		{"repack", "-A", "-d", "-q", "--unpack-unreachable=now"},
		{"repack", "--cruft", "-d", "-q", "--cruft-expiration=now"},
		{"repack", "--geometric=2", "-d", "-q"},
		{"prune", "--expire=now"},
	} {
		t.Run(strings.Join(maint, " "), func(t *testing.T) {
			s, dir := openInit(t)
			packDir := filepath.Join(commonDir(t, dir), "objects", "pack")
			var keeps []string
			var out string
			var err error
			s.SetSwapHook(func(stage string) {
				if stage != "locked" {
					return
				}
				keeps, _ = filepath.Glob(filepath.Join(packDir, "*.keep"))
				out, err = gitstatetest.GitErr(dir, maint...)
			})
			c, perr := putOne(s, "a/b.json")
			if perr != nil {
				t.Fatal(perr)
			}
			if err != nil {
				t.Fatalf("git %s: %v\n%s", strings.Join(maint, " "), err, out)
			}
			if len(keeps) != 1 {
				t.Fatalf("while the ref moved: .keep files %v, want one (the transaction's pack)", keeps)
			}
			if left, _ := filepath.Glob(filepath.Join(packDir, "*.keep")); len(left) != 0 {
				t.Fatalf(".keep left after the transaction: %v", left)
			}
			if typ := gitstatetest.Git(t, dir, "cat-file", "-t", c.Tree); typ != "tree" {
				t.Fatalf("the new tip's tree: %s", typ)
			}
			if got := tipRecords(t, dir); len(got) != 2 {
				t.Fatalf("records at the tip: %v", got)
			}
			assertHealthy(t, dir, 2)
		})
	}
}

// TestStaleKeepsOfDeadWritersAreSwept: a writer killed after writing its
// pack's .keep and before removing it leaves the keep behind, which would
// keep that pack out of every repack for good. The next writer removes the
// keeps git codex wrote (it holds the writer lock, so none is a live
// writer's) and leaves everyone else's alone.
func TestStaleKeepsOfDeadWritersAreSwept(t *testing.T) {
	dir := newStateRepo(t)
	packDir := filepath.Join(commonDir(t, dir), "objects", "pack")
	ours := filepath.Join(packDir, "pack-"+strings.Repeat("1", 40)+".keep")
	theirs := filepath.Join(packDir, "pack-"+strings.Repeat("2", 40)+".keep")
	empty := filepath.Join(packDir, "pack-"+strings.Repeat("3", 40)+".keep")
	for p, body := range map[string]string{ours: "git-codex 999999 on elsewhere\n", theirs: "receive-pack 4242 on host\n", empty: ""} {
		if err := os.WriteFile(p, []byte(body), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	s, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := putOne(s, "a/b.json"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ours); err == nil {
		t.Errorf("a dead git codex writer's keep is still there")
	}
	for _, p := range []string{theirs, empty} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v; another program's keep must stay", filepath.Base(p), err)
		}
	}
}

package gitstate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestReadsVersion1PackIndexes: packs git wrote with pack.indexVersion=1
// (older git, or that setting) are read like any other, and writing goes
// on over them.
func TestReadsVersion1PackIndexes(t *testing.T) {
	s, dir := openInit(t)
	for i := 0; i < 5; i++ {
		if _, err := putOne(s, fmt.Sprintf("r/%d.json", i)); err != nil {
			t.Fatal(err)
		}
	}
	want := tipRecords(t, dir)
	gitstatetest.WaitForMaintenance(t, dir)
	gitstatetest.Git(t, dir, "-c", "pack.indexVersion=1", "repack", "-a", "-d", "-q")
	idx, _ := filepath.Glob(filepath.Join(commonDir(t, dir), "objects", "pack", "*.idx"))
	if len(idx) != 1 {
		t.Fatalf("%d indexes after repack -a, want 1", len(idx))
	}
	if b, _ := os.ReadFile(idx[0]); len(b) < 4 || string(b[:4]) == "\xfftOc" {
		t.Fatalf("git wrote a version 2 index; the test needs version 1")
	}
	fresh, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if got := tipRecords(t, dir); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("over a version 1 index the tip reads %d records, want %d", len(got), len(want))
	}
	if _, err := putOne(fresh, "r/after.json"); err != nil {
		t.Fatalf("write over a version 1 index: %v", err)
	}
	assertHealthy(t, dir, 7)
}

// TestReadsThroughQuotedAlternates: git C-quotes a path in
// objects/info/alternates that holds a quote, a backslash, a control
// character or (with core.quotePath) a non-ASCII byte; such a line names
// an object directory like any other.
func TestReadsThroughQuotedAlternates(t *testing.T) {
	s, dir := openInit(t)
	if _, err := putOne(s, "shared/r.json"); err != nil {
		t.Fatal(err)
	}
	odd := filepath.Join(t.TempDir(), `a"b\c`)
	gitstatetest.Git(t, dir, "clone", "-q", "--bare", dir, odd)
	clone := filepath.Join(t.TempDir(), "clone")
	gitstatetest.Git(t, dir, "init", "-q", clone)
	objects := filepath.Join(odd, "objects")
	quoted := `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(objects) + `"`
	if err := os.WriteFile(filepath.Join(clone, ".git", "objects", "info", "alternates"), []byte(quoted+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitstatetest.Git(t, dir, "--git-dir", odd, "update-ref", gitstate.RefState, gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState))
	gitstatetest.Git(t, clone, "update-ref", gitstate.RefState, gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState))
	if got := gitstatetest.Git(t, clone, "cat-file", "-t", gitstate.RefState); got != "commit" {
		t.Fatalf("git itself does not read through the quoted alternate: %s", got)
	}
	if got := tipRecords(t, clone); string(got["shared/r.json"]) != "{\n  \"n\": 1\n}\n" {
		t.Fatalf("through a quoted alternate the clone reads %q", got)
	}
}

// TestPartialCloneReadsThroughGit: in a clone made with --filter=blob:none
// the state's records are not in the repository until git fetches them
// from the promisor remote, which git does on demand: the store reads them
// through git, and writes go on.
func TestPartialCloneReadsThroughGit(t *testing.T) {
	s, dir := openInit(t)
	for i := 0; i < 3; i++ {
		if _, err := putOne(s, fmt.Sprintf("r/%d.json", i)); err != nil {
			t.Fatal(err)
		}
	}
	gitstatetest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "code")
	gitstatetest.Git(t, dir, "config", "uploadpack.allowFilter", "true")
	clone := filepath.Join(t.TempDir(), "partial")
	gitstatetest.Git(t, dir, "clone", "-q", "--filter=blob:none", "file://"+dir, clone)
	gitstatetest.Git(t, clone, "fetch", "-q", "origin", gitstate.RefState+":"+gitstate.RefState)
	if out, _ := gitstatetest.GitErr(clone, "rev-list", "--objects", "--missing=print", gitstate.RefState); !strings.Contains(out, "?") {
		t.Fatalf("the partial clone has every blob already; the test needs some missing:\n%s", out)
	}
	if got := tipRecords(t, clone); len(got) != 4 {
		t.Fatalf("the partial clone reads %d records, want 4: %v", len(got), got)
	}
	cs, err := gitstate.Open(clone, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := putOne(cs, "r/in-clone.json"); err != nil {
		t.Fatalf("write in the partial clone: %v", err)
	}
	if got := tipRecords(t, clone); len(got) != 5 {
		t.Fatalf("after a write the partial clone reads %d records, want 5", len(got))
	}
}

package gitstate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// A sync lists refs without `git for-each-ref` (refsUnder): the same refs
// with the same objects, loose and packed, in git's order, a ref whose
// object the repository lacks included, one that holds no object id left
// out (git warns "ignoring broken ref"); the notes refs git codex owns are
// those `for-each-ref refs/notes/codex*` lists (codex, codex-reviews; not
// codex-x/y nor commits).
func TestRefsUnderListsAsForEachRef(t *testing.T) {
	s, dir := openInit(t)
	c1 := putRaw(t, s, "a.json", "1")
	c2 := putRaw(t, s, "b.json", "2")
	for ref, at := range map[string]string{
		"refs/codex/archive/records-2026-01-01-aa": c1.Hash,
		"refs/codex/archive/cycle-1":               c2.Hash,
		"refs/codex/archive/deep/er":               c1.Hash,
		"refs/notes/codex":                         c1.Hash,
		"refs/notes/codex-reviews":                 c2.Hash,
		"refs/notes/codex-x/y":                     c2.Hash,
		"refs/notes/commits":                       c1.Hash,
	} {
		gitstatetest.Git(t, dir, "update-ref", ref, at)
	}
	gitstatetest.Git(t, dir, "pack-refs", "--all")
	// loose after packing, one moved since: the loose one counts
	gitstatetest.Git(t, dir, "update-ref", "refs/codex/archive/cycle-1", c1.Hash)
	gitstatetest.Git(t, dir, "update-ref", "refs/codex/archive/cycle-2", c2.Hash)
	// refs git calls broken: its object is not here; no object id
	gitDir := gitstatetest.Git(t, dir, "rev-parse", "--git-common-dir")
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(dir, gitDir)
	}
	if err := os.WriteFile(filepath.Join(gitDir, "refs/codex/archive/broken"), []byte(strings.Repeat("ab", 20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gitDir, "refs/codex/archive/garbage"), []byte("not a hash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{gitstate.ArchivePrefix, "refs/notes/"} {
		got, err := s.RefsUnder(prefix)
		if err != nil {
			t.Fatal(err)
		}
		want := withoutWarnings(gitstatetest.Git(t, dir, "for-each-ref", "--format=%(refname) %(objectname)", prefix))
		if strings.Join(got, "\n") != want {
			t.Errorf("refsUnder(%s) =\n%s\nwant, as git for-each-ref lists them,\n%s", prefix, strings.Join(got, "\n"), want)
		}
	}
	notes, err := s.LocalNotes()
	if err != nil {
		t.Fatal(err)
	}
	want := withoutWarnings(gitstatetest.Git(t, dir, "for-each-ref", "--format=%(refname)", gitstate.NotesPrefix+"*"))
	if strings.Join(notes, "\n") != want || len(notes) != 2 {
		t.Errorf("localNotes = %v, want the 2 that git for-each-ref lists:\n%s", notes, want)
	}
}

// withoutWarnings is git's output less its "warning:" lines (gitstatetest.Git
// returns stderr with stdout).
func withoutWarnings(out string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, "warning: ") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

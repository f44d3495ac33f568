package gitstate_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestArchiveRefusalRemembered: a record archive the remote holds that
// does not check out is walked once: the next sync, by another process
// (a Store opened afresh), refuses it again without checking it, and it is
// still not adopted; when the remote's ref moves to another lying commit,
// that one is checked (once), and the refusal of the commit no ref names
// any more is forgotten. One whose state commit is not here is checked
// at every sync (a later fetch may bring it), and refused.
func TestArchiveRefusalRemembered(t *testing.T) {
	ctx := context.Background()
	s, dir := openInit(t)
	base := putRaw(t, s, readPath, readMail)
	origin := filepath.Join(t.TempDir(), "origin.git")
	gitstatetest.Git(t, filepath.Dir(origin), "init", "-q", "--bare", origin)
	gitstatetest.Git(t, dir, "remote", "add", "origin", origin)
	opts := gitstate.SyncOptions{Resolve: clockResolver, Finish: finishMeta, Push: true, Layout: archiveLayout(archiveRule)}
	if _, err := s.Sync(ctx, "origin", opts); err != nil {
		t.Fatal(err)
	}
	// a peer pushes an archive whose manifest undercounts what it holds
	const ref = gitstate.RecordArchivePrefix + "2026-01-01-lie"
	push := func(files map[string]string) string {
		t.Helper()
		c := writeArchive(t, dir, "refs/heads/forged", files)
		gitstatetest.Git(t, dir, "push", "-q", "-f", origin, "refs/heads/forged:"+ref)
		gitstatetest.Git(t, dir, "update-ref", "-d", "refs/heads/forged")
		return c
	}
	lie1 := push(map[string]string{"manifest.json": manifest(t, base.Hash, map[string]int{"mail": 2}), readPath: readMail})

	sync := func(what string, wantChecks int) {
		t.Helper()
		st, err := gitstate.Open(dir, gitstate.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		checks := 0
		st.SetArchiveCheckHook(func(string) { checks++ })
		if _, err := st.Sync(ctx, "origin", opts); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if checks != wantChecks {
			t.Errorf("%s: the archive was checked %d times, want %d", what, checks, wantChecks)
		}
		if got := gitstatetest.Git(t, dir, "for-each-ref", gitstate.ArchivePrefix); strings.Contains(got, "lie") {
			t.Errorf("%s: the lying archive was adopted:\n%s", what, got)
		}
	}
	refusals := func() string {
		out, _ := gitstatetest.GitErr(dir, "config", "--local", "--get-regexp", `^codex-archive-refused\.`)
		return out
	}

	sync("first sync", 1)
	if got := refusals(); !strings.Contains(got, "codex-archive-refused."+lie1+".why ") || !strings.Contains(got, "counts the records mail=2, but it holds mail=1") {
		t.Fatalf("the refusal is not remembered:\n%s", got)
	}
	sync("second sync", 0)
	sync("third sync", 0)

	// the remote's ref moves: the new commit is checked, the old one's
	// refusal forgotten
	lie2 := push(map[string]string{"manifest.json": manifest(t, base.Hash, map[string]int{"mail": 3}), readPath: readMail})
	sync("after the ref moved", 1)
	got := refusals()
	if !strings.Contains(got, lie2) || strings.Contains(got, lie1) {
		t.Fatalf("remembered after the ref moved:\n%s", got)
	}
	sync("after that", 0)

	// a state commit this repository lacks may come later: not remembered
	push(map[string]string{"manifest.json": manifest(t, strings.Repeat("ab", 20), map[string]int{"mail": 1}), readPath: readMail})
	sync("a tip not here", 1)
	sync("a tip not here, again", 1)
	if got := refusals(); got != "" {
		t.Errorf("remembered a refusal that may not last, or kept a stale one:\n%s", got)
	}
}

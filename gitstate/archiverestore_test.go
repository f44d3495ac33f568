package gitstate_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// restore runs RestoreArchived for key in one transaction, as the tool
// archive_restore does.
func restore(t *testing.T, s *gitstate.Store, key string) (gitstate.RestoredRecords, gitstate.Commit, error) {
	t.Helper()
	return restoreIn(t, s, key, restoreLayout())
}

// restoreIn is restore against layout.
func restoreIn(t *testing.T, s *gitstate.Store, key string, layout *gitstate.Layout) (gitstate.RestoredRecords, gitstate.Commit, error) {
	t.Helper()
	var got gitstate.RestoredRecords
	c, err := s.Update(context.Background(), func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("archive_restore"))
		var err error
		got, err = tx.RestoreArchived(context.Background(), key, layout)
		return err
	})
	return got, c, err
}

// restoreLayout is what the kinds tell of retention (tools.Kind.Retention):
// an instance's agent and wake records under one name.
func restoreLayout() *gitstate.Layout {
	return &gitstate.Layout{Dirs: []gitstate.DirLayout{
		{Dir: "mail", Depth: 1, Keep: true, Retention: "mail"},
		{Dir: "agents", Depth: 1, Retention: "instances"},
		{Dir: "wake", Depth: 1, Retention: "instances"},
	}}
}

// TestRestoreArchivedLayout reads what an archive may hold from the layout
// the kinds give, and only from it: the same honest archive checks out
// when its directories have a retention name and is refused when the
// layout gives none (or there is no layout), naming the record.
func TestRestoreArchivedLayout(t *testing.T) {
	s, dir := openInit(t)
	base := putRaw(t, s, readPath, readMail, unreadPath, unread)
	ref := gitstate.RecordArchivePrefix + "2026-01-01-l1"
	writeArchive(t, dir, ref, map[string]string{
		readPath:                       readMail,
		gitstate.RecordArchiveManifest: manifest(t, base.Hash, map[string]int{"mail": 1}),
	})
	putRaw(t, s, readPath, "")
	noRetention := &gitstate.Layout{Dirs: []gitstate.DirLayout{{Dir: "mail", Depth: 1, Keep: true}}}
	for _, l := range []*gitstate.Layout{noRetention, nil} {
		var na *gitstate.NotArchivedError
		if _, _, err := restoreIn(t, s, "m2", l); !errors.As(err, &na) || len(na.Refused) != 1 || !strings.Contains(na.Refused[0], "it holds "+readPath+", a record of no kind archive takes") {
			t.Fatalf("restore against a layout without mail's retention (%v): %v", l, err)
		}
	}
	// a retention name of another directory's is not mail's
	other := &gitstate.Layout{Dirs: []gitstate.DirLayout{{Dir: "mail", Depth: 1, Keep: true, Retention: "letters"}}}
	var na *gitstate.NotArchivedError
	if _, _, err := restoreIn(t, s, "m2", other); !errors.As(err, &na) || len(na.Refused) != 1 || !strings.Contains(na.Refused[0], "manifest counts the records mail=1, but it holds letters=1") {
		t.Fatalf("restore against a layout naming mail otherwise: %v", err)
	}
	if got, _, err := restore(t, s, "m2"); err != nil || got.Archive != ref {
		t.Fatalf("restore against the kinds' layout: %+v, %v", got, err)
	}
}

// TestRestoreArchived puts archived records back on the tip: by id (an
// instance's agent and wake records together) or by path, as the archive
// holds them, with Codex-Restored-From naming the archive; a record on the
// tip, one no archive holds, and one only a lying archive holds are
// refused, and nothing is written.
func TestRestoreArchived(t *testing.T) {
	s, dir := openInit(t)
	const (
		agentPath = "agents/w1.json"
		agent     = `{"id":"w1","status":"TERMINATED"}`
		wakePath  = "wake/w1.json"
		wake      = `{"recipient":"w1"}`
	)
	base := putRaw(t, s, readPath, readMail, unreadPath, unread, agentPath, agent, wakePath, wake)
	ref := gitstate.RecordArchivePrefix + "2026-01-01-a1"
	arch := writeArchive(t, dir, ref, map[string]string{
		readPath: readMail, agentPath: agent, wakePath: wake,
		gitstate.RecordArchiveManifest: manifest(t, base.Hash, map[string]int{"mail": 1, "instances": 2}),
	})
	putRaw(t, s, readPath, "", agentPath, "", wakePath, "")
	// a peer's lying archive: a mail the state never had
	forged := gitstate.RecordArchivePrefix + "2026-01-02-evil"
	writeArchive(t, dir, forged, map[string]string{
		"mail/m9.json":                 `{"mail":"read"}`,
		gitstate.RecordArchiveManifest: manifest(t, base.Hash, map[string]int{"mail": 1}),
	})

	got, c, err := restore(t, s, "m2")
	if err != nil {
		t.Fatal(err)
	}
	if got.Archive != ref || got.Commit != arch || got.StateTip != base.Hash || !slices.Equal(got.Paths, []string{readPath}) {
		t.Fatalf("restored %+v, want %s from %s (%s)", got, readPath, ref, arch)
	}
	if b := gitstatetest.Git(t, dir, "cat-file", "blob", gitstate.RefState+":"+readPath); b != readMail {
		t.Fatalf("restored %s = %q, want the archived %q", readPath, b, readMail)
	}
	msg := gitstatetest.Git(t, dir, "log", "-1", "--format=%B", c.Hash)
	if want := gitstate.TrailerRestoredFrom + ": " + ref + " (" + arch + ")"; !strings.Contains(msg, want) {
		t.Fatalf("the restore's commit says\n%s\nwant the trailer %q", msg, want)
	}

	// on the tip already: refused, nothing written
	before := tip(t, dir)
	var live *gitstate.RecordLiveError
	if _, _, err := restore(t, s, readPath); !errors.As(err, &live) || !errors.Is(err, gitstate.ErrRecordLive) || !slices.Equal(live.Paths, []string{readPath}) {
		t.Fatalf("restore of a live record: %v, want ErrRecordLive naming %s", err, readPath)
	}
	// no archive holds it, or the path of one that does but as a mail
	for _, key := range []string{"m1", "nope", "mail/m2"[:5] + "m1"} {
		var na *gitstate.NotArchivedError
		if _, _, err := restore(t, s, key); !errors.As(err, &na) || len(na.Refused) != 0 {
			t.Fatalf("restore %s: %v, want ErrNotArchived and no archive named", key, err)
		}
	}
	// only a lying archive holds it: refused, and it says which and why
	var na *gitstate.NotArchivedError
	if _, _, err := restore(t, s, "m9"); !errors.As(err, &na) || len(na.Refused) != 1 || !strings.Contains(na.Refused[0], forged) || !strings.Contains(na.Refused[0], "does not have as archived") {
		t.Fatalf("restore from a lying archive: %v", err)
	}
	for _, key := range []string{"", "mail/../x", "mail//x"} {
		if _, _, err := restore(t, s, key); !errors.Is(err, gitstate.ErrInvalidPath) {
			t.Fatalf("restore %q: %v, want ErrInvalidPath", key, err)
		}
	}
	if after := tip(t, dir); after != before {
		t.Fatalf("refused restores moved the state from %s to %s", before, after)
	}

	// an instance's records come back together, by id; by path, one
	got, _, err = restore(t, s, "w1")
	if err != nil || !slices.Equal(got.Paths, []string{agentPath, wakePath}) {
		t.Fatalf("restore w1: %+v, %v", got, err)
	}
	putRaw(t, s, wakePath, "")
	if got, _, err = restore(t, s, strings.TrimSuffix(wakePath, ".json")); err != nil || !slices.Equal(got.Paths, []string{wakePath}) {
		t.Fatalf("restore %s: %+v, %v", wakePath, got, err)
	}
}

// TestRestoreArchivedNewest takes the version of the newest archive when
// a record was archived, restored, changed and archived again; and does
// not believe an archive taken from a state that is not in the tip's
// history (a branch the state left behind).
func TestRestoreArchivedNewest(t *testing.T) {
	s, dir := openInit(t)
	v1 := putRaw(t, s, readPath, readMail)
	t.Setenv("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
	old := gitstate.RecordArchivePrefix + "2026-01-01-b" // sorts after the newer's ref
	writeArchive(t, dir, old, map[string]string{readPath: readMail, gitstate.RecordArchiveManifest: manifest(t, v1.Hash, map[string]int{"mail": 1})})
	const v2mail = `{"mail":"read","again":true}`
	v2 := putRaw(t, s, readPath, v2mail)
	t.Setenv("GIT_COMMITTER_DATE", "2026-02-01T00:00:00Z")
	newer := gitstate.RecordArchivePrefix + "2026-02-01-a"
	writeArchive(t, dir, newer, map[string]string{readPath: v2mail, gitstate.RecordArchiveManifest: manifest(t, v2.Hash, map[string]int{"mail": 1})})
	putRaw(t, s, readPath, "")
	got, _, err := restore(t, s, "m2")
	if err != nil || got.Archive != newer {
		t.Fatalf("restore: %+v, %v; want the version of %s", got, err, newer)
	}
	if b := gitstatetest.Git(t, dir, "cat-file", "blob", gitstate.RefState+":"+readPath); b != v2mail {
		t.Fatalf("restored %q, want the newest archived %q", b, v2mail)
	}

	// an archive of a state the tip's history does not hold
	t.Setenv("GIT_COMMITTER_DATE", "")
	putRaw(t, s, readPath, "")
	side := putRaw(t, s, "mail/m7.json", `{"mail":"read"}`)
	resetState(t, dir, v2.Hash)
	putRaw(t, s, "notes/x.json", "{}")
	writeArchive(t, dir, gitstate.RecordArchivePrefix+"2026-03-01-c", map[string]string{"mail/m7.json": `{"mail":"read"}`, gitstate.RecordArchiveManifest: manifest(t, side.Hash, map[string]int{"mail": 1})})
	var na *gitstate.NotArchivedError
	if _, _, err := restore(t, s, "m7"); !errors.As(err, &na) || len(na.Refused) != 1 || !strings.Contains(na.Refused[0], "not in the history") {
		t.Fatalf("restore from an archive of a state left behind: %v", err)
	}
}

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

// TestArchiveNewestCheckedFirst: a merge looks a deleted record up in the
// newest record archive first (by the day in its name), so an older
// archive that also holds it is not checked once the newest lets the
// deletion stand; when none does, the refusals are listed oldest first, as
// before (issue 27: a day-behind sync looked each of a day's ~1,850
// archived records up in every older archive).
func TestArchiveNewestCheckedFirst(t *testing.T) {
	sc := newArchiveScene(t, nil, []string{readPath}, true)
	// older, and lying (no manifest); newer and honest
	writeArchive(t, sc.dir, gitstate.RecordArchivePrefix+"2026-01-01-a0", map[string]string{readPath: readMail})
	writeArchive(t, sc.dir, gitstate.RecordArchivePrefix+"2026-01-03-b0", map[string]string{
		"manifest.json": manifest(t, sc.base.Hash, map[string]int{"mail": 1}), readPath: readMail,
	})
	var checked []string
	sc.s.SetArchiveCheckHook(func(ref string) { checked = append(checked, ref) })
	res, on := sc.merge(t, archiveLayout(archiveRule))
	if on[readPath] || res.Status != gitstate.MergeFastForward {
		t.Fatalf("the honest archive did not count: on tip %v, %s", on[readPath], res.Status)
	}
	if want := []string{gitstate.RecordArchivePrefix + "2026-01-03-b0"}; strings.Join(checked, " ") != strings.Join(want, " ") {
		t.Errorf("checked %v, want %v (the newest only)", checked, want)
	}

	// two that lie: the refusals in the archives' order, oldest first
	sc = newArchiveScene(t, nil, []string{readPath}, false)
	for _, day := range []string{"2026-01-05", "2026-01-02"} {
		writeArchive(t, sc.dir, gitstate.RecordArchivePrefix+day+"-c0", map[string]string{readPath: readMail, "mail/" + day + ".json": readMail})
	}
	res, on = sc.merge(t, archiveLayout(archiveRule))
	if !on[readPath] {
		t.Fatal("lying archives let the mail go")
	}
	var got []string
	for _, r := range res.Report.ArchiveRefused {
		got = append(got, r.Archive)
	}
	if want := gitstate.RecordArchivePrefix + "2026-01-02-c0 " + gitstate.RecordArchivePrefix + "2026-01-05-c0"; strings.Join(got, " ") != want {
		t.Errorf("refused by %v, want %s", got, want)
	}
}

// TestSyncChecksFetchedArchiveOnce: a sync that fast-forwards to a state
// whose deletions a fetched record archive explains checks that archive
// once, for the merge and for its adoption both (it was walked twice, ~0.03-0.05 s
// each for a day's archive), and still adopts it and lets the deletion
// stand.
func TestSyncChecksFetchedArchiveOnce(t *testing.T) {
	ctx := context.Background()
	s, dir := openInit(t)
	base := putRaw(t, s, taskPath, taskOpen, readPath, readMail)
	origin := filepath.Join(t.TempDir(), "origin.git")
	gitstatetest.Git(t, filepath.Dir(origin), "init", "-q", "--bare", origin)
	gitstatetest.Git(t, dir, "remote", "add", "origin", origin)
	opts := gitstate.SyncOptions{Resolve: clockResolver, Finish: finishMeta, Push: true, Layout: archiveLayout(archiveRule)}
	if _, err := s.Sync(ctx, "origin", opts); err != nil {
		t.Fatal(err)
	}
	// a peer archives the read mail and publishes its state without it
	const ref = gitstate.RecordArchivePrefix + "2026-01-01-peer"
	theirs := putRaw(t, s, readPath, "")
	writeArchive(t, dir, ref, map[string]string{"manifest.json": manifest(t, base.Hash, map[string]int{"mail": 1}), readPath: readMail})
	gitstatetest.Git(t, dir, "push", "-q", origin, gitstate.RefState+":"+gitstate.RefState, ref+":"+ref)
	gitstatetest.Git(t, dir, "update-ref", "-d", ref)
	resetState(t, dir, base.Hash)

	checks := 0
	s.SetArchiveCheckHook(func(string) { checks++ })
	res, err := s.Sync(ctx, "origin", opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Merge.Status != gitstate.MergeFastForward || res.Merge.Commit != theirs.Hash {
		t.Fatalf("merge %s to %s, want a fast-forward to %s", res.Merge.Status, res.Merge.Commit, theirs.Hash)
	}
	if checks != 1 {
		t.Errorf("the archive was checked %d times, want 1", checks)
	}
	if got := gitstatetest.Git(t, dir, "for-each-ref", "--format=%(refname)", gitstate.ArchivePrefix); got != ref {
		t.Errorf("archive refs %q, want %s adopted", got, ref)
	}
}

// TestArchiveOfIncomingStateNoAncestryProcess: a sync whose fetched archive
// names a state commit the sync brings (the day's archive, made on a peer
// during the day) knows that commit is in the history of the side that
// deleted the records from the commits it brings, without `git merge-base
// --is-ancestor`, and the deletion stands as before.
func TestArchiveOfIncomingStateNoAncestryProcess(t *testing.T) {
	ctx := context.Background()
	s, dir := openInit(t)
	base := putRaw(t, s, taskPath, taskOpen, readPath, readMail)
	origin := filepath.Join(t.TempDir(), "origin.git")
	gitstatetest.Git(t, filepath.Dir(origin), "init", "-q", "--bare", origin)
	gitstatetest.Git(t, dir, "remote", "add", "origin", origin)
	opts := gitstate.SyncOptions{Resolve: clockResolver, Finish: finishMeta, Push: true, Layout: archiveLayout(archiveRule)}
	if _, err := s.Sync(ctx, "origin", opts); err != nil {
		t.Fatal(err)
	}
	// a peer writes on, archives the read mail as its state then had it,
	// and publishes its state without it
	const ref = gitstate.RecordArchivePrefix + "2026-01-01-peer"
	mid := putRaw(t, s, "other.json", "x")
	theirs := putRaw(t, s, readPath, "")
	writeArchive(t, dir, ref, map[string]string{"manifest.json": manifest(t, mid.Hash, map[string]int{"mail": 1}), readPath: readMail})
	gitstatetest.Git(t, dir, "push", "-q", origin, gitstate.RefState+":"+gitstate.RefState, ref+":"+ref)
	gitstatetest.Git(t, dir, "update-ref", "-d", ref)
	resetState(t, dir, base.Hash)

	trace := filepath.Join(t.TempDir(), "trace")
	t.Setenv("GIT_TRACE", trace)
	res, err := s.Sync(ctx, "origin", opts)
	t.Setenv("GIT_TRACE", "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Merge.Status != gitstate.MergeFastForward || res.Merge.Commit != theirs.Hash {
		t.Fatalf("merge %s to %s, want a fast-forward to %s (the archive lets the deletion stand)", res.Merge.Status, res.Merge.Commit, theirs.Hash)
	}
	if got := gitstatetest.Git(t, dir, "for-each-ref", "--format=%(refname)", gitstate.ArchivePrefix); got != ref {
		t.Errorf("archive refs %q, want %s adopted", got, ref)
	}
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, "merge-base") {
			t.Errorf("the sync asked git for an ancestry it had listed: %s", line)
		}
	}
}

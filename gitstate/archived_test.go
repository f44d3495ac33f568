package gitstate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// Records of the archive tests: an open task, an unread and a read mail.
// The test rule (archiveRule) calls a mail ended when it says "read": what
// tools' rule reads from its fields.
const (
	taskPath   = "tasks/t1.json"
	taskOpen   = `{"state":"OPEN"}`
	unreadPath = "mail/m1.json"
	unread     = `{"mail":"unread"}`
	readPath   = "mail/m2.json"
	readMail   = `{"mail":"read"}`
)

func archiveLayout(rule gitstate.ArchiveRule) *gitstate.Layout {
	return &gitstate.Layout{Dirs: []gitstate.DirLayout{
		{Dir: "tasks", Depth: 1, Keep: true},
		{Dir: "mail", Depth: 1, Keep: true, Retention: "mail"},
	}, Archivable: rule}
}

func archiveRule(path string, record []byte) bool {
	return strings.HasPrefix(path, "mail/") && strings.Contains(string(record), `"read"`)
}

// writeArchive writes a record archive holding files (path -> content; a
// manifest is one of them, or none) with plain git plumbing, as a peer
// could, and points ref at it.
func writeArchive(t *testing.T, dir, ref string, files map[string]string) string {
	t.Helper()
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	git := gitstatetest.IndexGit(t, dir)
	for _, p := range paths {
		blob := gitstatetest.WriteObject(t, dir, "blob", []byte(files[p]))
		git("update-index", "--add", "--cacheinfo", "100644,"+blob+","+p)
	}
	tree := git("write-tree")
	c := gitstatetest.CommitTree(t, dir, tree, "archive\n\nCodex-Tool: archive\nCodex-Clock: 1")
	gitstatetest.Git(t, dir, "update-ref", ref, c)
	return c
}

func manifest(t *testing.T, tip string, records map[string]int) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"archived_by": "mallory", "state_tip": tip, "records": records})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// archiveScene is a base with an open task, an unread and a read mail;
// theirs (a commit not on the ref) deletes what del names, after changing
// what change names (path, content pairs); ours, on the ref, adds a record
// of its own unless ff (then ours is the base, and the merge may
// fast-forward).
type archiveScene struct {
	s            *gitstate.Store
	dir          string
	base, theirs gitstate.Commit
	changed      gitstate.Commit // theirs' commit after change, before del (base if no change)
}

func newArchiveScene(t *testing.T, change []string, del []string, ff bool) *archiveScene {
	t.Helper()
	s, dir := openInit(t)
	sc := &archiveScene{s: s, dir: dir}
	sc.base = putRaw(t, s, taskPath, taskOpen, unreadPath, unread, readPath, readMail)
	sc.changed = sc.base
	if len(change) > 0 {
		sc.changed = putRaw(t, s, change...)
	}
	var kv []string
	for _, p := range del {
		kv = append(kv, p, "")
	}
	sc.theirs = putRaw(t, s, kv...)
	resetState(t, dir, sc.base.Hash)
	if !ff {
		putRaw(t, s, "notes/ours.json", `{"ours":1}`)
	}
	return sc
}

// merge merges theirs with the layout's rules and returns the result and
// the paths on the tip afterwards.
func (sc *archiveScene) merge(t *testing.T, layout *gitstate.Layout) (gitstate.MergeResult, map[string]bool) {
	t.Helper()
	var report gitstate.MergeReport
	res, err := sc.s.MergeValidated(context.Background(), sc.theirs.Hash, (&testResolver{}).resolve, gitstate.Check{Layout: layout},
		func(tx *gitstate.Tx, r gitstate.MergeReport) error {
			report = r
			return finishMeta(tx, r)
		})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status == gitstate.MergeMerged {
		res.Report = report
	}
	on := map[string]bool{}
	for _, p := range strings.Fields(gitstatetest.Git(t, sc.dir, "ls-tree", "-r", "--name-only", gitstate.RefState)) {
		on[p] = true
	}
	return res, on
}

func refusedTrailers(t *testing.T, dir string) string {
	t.Helper()
	return gitstatetest.Git(t, dir, "log", "-1", "--format=%(trailers:key="+gitstate.TrailerArchiveRefused+",valueonly)", gitstate.RefState)
}

// TestArchiveHostileKeepsOpenRecords: a peer pushes an archive holding our
// open task, and a state deleting it; the merge keeps the task, says why in
// its report and its commit, and lets no other deletion through on the
// strength of that archive. The same for an unread mail in an archive that
// is otherwise honest: the rule (Layout.Archivable) refuses it.
func TestArchiveHostileKeepsOpenRecords(t *testing.T) {
	for _, ff := range []bool{false, true} {
		sc := newArchiveScene(t, nil, []string{taskPath, unreadPath}, ff)
		// byte-identical to the base, which is in theirs' history: only
		// the kind and the rule can tell
		writeArchive(t, sc.dir, "refs/codex/remotes/origin/archive/records-2026-01-01-aa", map[string]string{
			"manifest.json": manifest(t, sc.base.Hash, map[string]int{"mail": 1, "tasks": 1}),
			taskPath:        taskOpen,
		})
		writeArchive(t, sc.dir, "refs/codex/remotes/origin/archive/records-2026-01-01-bb", map[string]string{
			"manifest.json": manifest(t, sc.base.Hash, map[string]int{"mail": 1}),
			unreadPath:      unread,
		})
		res, on := sc.merge(t, archiveLayout(archiveRule))
		if res.Status != gitstate.MergeMerged {
			t.Fatalf("ff=%v: merge = %s, want a merge that keeps the records", ff, res.Status)
		}
		if !on[taskPath] || !on[unreadPath] {
			t.Fatalf("ff=%v: after the merge the tip holds %v: the open task and the unread mail must stay", ff, on)
		}
		got := res.Report.ArchiveRefused
		if len(got) != 2 || got[0].Path != unreadPath || got[1].Path != taskPath {
			t.Fatalf("ff=%v: ArchiveRefused = %+v", ff, got)
		}
		if !strings.Contains(got[0].Reason, "has not ended") || !strings.HasSuffix(got[0].Archive, "-bb") {
			t.Errorf("ff=%v: the unread mail refused for %q (%s)", ff, got[0].Reason, got[0].Archive)
		}
		if !strings.Contains(got[1].Reason, "no kind archive takes") {
			t.Errorf("ff=%v: the task refused for %q", ff, got[1].Reason)
		}
		if !slices.Equal(res.Report.Kept, []string{unreadPath, taskPath}) {
			t.Errorf("ff=%v: Kept = %v", ff, res.Report.Kept)
		}
		tr := refusedTrailers(t, sc.dir)
		if !strings.Contains(tr, taskPath+": it holds "+taskPath) || !strings.Contains(tr, unreadPath+": the archived record has not ended") {
			t.Errorf("ff=%v: the merge commit's %s trailers:\n%s", ff, gitstate.TrailerArchiveRefused, tr)
		}
	}
}

// TestArchiveWithoutRuleChecksKinds: without a rule the store still keeps
// records of kinds archive never takes; it cannot read a mail's fields, so
// an unread mail in an honest-looking archive leaves (the caller's rule is
// what refuses it).
func TestArchiveWithoutRuleChecksKinds(t *testing.T) {
	sc := newArchiveScene(t, nil, []string{taskPath, unreadPath}, false)
	writeArchive(t, sc.dir, gitstate.RecordArchivePrefix+"2026-01-01-aa", map[string]string{
		"manifest.json": manifest(t, sc.base.Hash, map[string]int{"mail": 1}),
		taskPath:        taskOpen,
	})
	writeArchive(t, sc.dir, gitstate.RecordArchivePrefix+"2026-01-01-bb", map[string]string{
		"manifest.json": manifest(t, sc.base.Hash, map[string]int{"mail": 1}),
		unreadPath:      unread,
	})
	_, on := sc.merge(t, archiveLayout(nil))
	if !on[taskPath] {
		t.Fatal("the open task left the tip")
	}
	if on[unreadPath] {
		t.Fatal("without a rule, an archive that checks out lets the mail go (the rule is the caller's)")
	}
}

// TestArchiveHonestDeletionStands: a read mail that the other side
// archived, which we still have unchanged, leaves at the merge, and a
// fast-forward to that state stays a fast-forward; merging either way
// gives the same tree. Also when the archiving side changed the record
// first (read, then archived): the archive holds its last version.
func TestArchiveHonestDeletionStands(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change []string
		held   string
	}{
		{"unchanged", nil, readMail},
		{"read then archived", []string{unreadPath, `{"mail":"read","at":1}`}, `{"mail":"read","at":1}`},
	} {
		path := readPath
		if tc.change != nil {
			path = unreadPath
		}
		for _, ff := range []bool{false, true} {
			sc := newArchiveScene(t, tc.change, []string{path}, ff)
			writeArchive(t, sc.dir, "refs/codex/remotes/origin/archive/records-2026-01-01-cc", map[string]string{
				"manifest.json": manifest(t, sc.changed.Hash, map[string]int{"mail": 1}),
				path:            tc.held,
			})
			res, on := sc.merge(t, archiveLayout(archiveRule))
			if on[path] {
				t.Fatalf("%s ff=%v: the archived mail came back (%s, refused %+v)", tc.name, ff, res.Status, res.Report.ArchiveRefused)
			}
			if !on[taskPath] {
				t.Fatalf("%s ff=%v: the task left", tc.name, ff)
			}
			if ff && res.Status != gitstate.MergeFastForward {
				t.Errorf("%s: merge = %s, want a fast-forward", tc.name, res.Status)
			}
			if !ff {
				if len(res.Report.ArchiveRefused) != 0 || len(res.Report.Kept) != 0 {
					t.Errorf("%s: report %+v", tc.name, res.Report)
				}
				if tr := refusedTrailers(t, sc.dir); tr != "" {
					t.Errorf("%s: refused trailers %q", tc.name, tr)
				}
				// the other way round: the same tree
				merged := tip(t, sc.dir)
				ours := merged + "^1"
				resetState(t, sc.dir, sc.theirs.Hash)
				if _, err := sc.s.MergeValidated(context.Background(), gitstatetest.Git(t, sc.dir, "rev-parse", ours),
					(&testResolver{}).resolve, gitstate.Check{Layout: archiveLayout(archiveRule)}, finishMeta); err != nil {
					t.Fatal(err)
				}
				if a, b := gitstatetest.Git(t, sc.dir, "rev-parse", merged+"^{tree}"), gitstatetest.Git(t, sc.dir, "rev-parse", gitstate.RefState+"^{tree}"); a != b {
					t.Errorf("%s: merging the other way gives tree %s, not %s", tc.name, b, a)
				}
			}
		}
	}
}

// TestArchiveThatLies: archives whose manifest does not match what they
// hold, or names a state commit this repository lacks or that is not in the
// deleting side's history, let no deletion stand, even of a read mail.
func TestArchiveThatLies(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files func(sc *archiveScene) map[string]string
		why   string
	}{
		{"no manifest", func(sc *archiveScene) map[string]string {
			return map[string]string{readPath: readMail}
		}, "has no manifest.json"},
		{"not a manifest", func(sc *archiveScene) map[string]string {
			return map[string]string{"manifest.json": "[1,", readPath: readMail}
		}, "is not a manifest"},
		{"a tip we do not have", func(sc *archiveScene) map[string]string {
			return map[string]string{"manifest.json": manifest(t, strings.Repeat("ab", 20), map[string]int{"mail": 1}), readPath: readMail}
		}, "which this repository does not have"},
		{"no tip", func(sc *archiveScene) map[string]string {
			return map[string]string{"manifest.json": manifest(t, "HEAD", map[string]int{"mail": 1}), readPath: readMail}
		}, "names no state commit"},
		{"a tip outside the deleter's history", func(sc *archiveScene) map[string]string {
			return map[string]string{"manifest.json": manifest(t, tip(t, sc.dir), map[string]int{"mail": 1}), readPath: readMail}
		}, "is not in the history of the side that deleted"},
		{"a record not as at the tip", func(sc *archiveScene) map[string]string {
			return map[string]string{"manifest.json": manifest(t, sc.base.Hash, map[string]int{"mail": 1}), readPath: readMail + " "}
		}, "does not have as archived"},
		{"records the manifest does not count", func(sc *archiveScene) map[string]string {
			return map[string]string{"manifest.json": manifest(t, sc.base.Hash, map[string]int{"mail": 1}), readPath: readMail, unreadPath: unread}
		}, "counts the records mail=1, but it holds mail=2"},
		{"records the manifest counts but lacks", func(sc *archiveScene) map[string]string {
			return map[string]string{"manifest.json": manifest(t, sc.base.Hash, map[string]int{"mail": 1, "github": 3}), readPath: readMail}
		}, "counts the records github=3 mail=1, but it holds mail=1"},
		{"a record outside archive's kinds", func(sc *archiveScene) map[string]string {
			return map[string]string{"manifest.json": manifest(t, sc.base.Hash, map[string]int{"mail": 1}), readPath: readMail, "config/version.json": "{}"}
		}, "a record of no kind archive takes"},
	} {
		sc := newArchiveScene(t, nil, []string{readPath}, false)
		writeArchive(t, sc.dir, gitstate.RecordArchivePrefix+"2026-01-01-dd", tc.files(sc))
		res, on := sc.merge(t, archiveLayout(archiveRule))
		if !on[readPath] {
			t.Errorf("%s: the mail left the tip", tc.name)
			continue
		}
		got := res.Report.ArchiveRefused
		if len(got) != 1 || got[0].Path != readPath || !strings.Contains(got[0].Reason, tc.why) {
			t.Errorf("%s: ArchiveRefused = %+v, want the mail refused for %q", tc.name, got, tc.why)
		}
	}
}

// TestArchiveOneHonestOfMany: a lying archive beside an honest one that
// holds the same record does not stop the honest one.
func TestArchiveOneHonestOfMany(t *testing.T) {
	sc := newArchiveScene(t, nil, []string{readPath}, false)
	writeArchive(t, sc.dir, gitstate.RecordArchivePrefix+"2026-01-01-a0", map[string]string{readPath: readMail})
	writeArchive(t, sc.dir, gitstate.RecordArchivePrefix+"2026-01-01-b0", map[string]string{
		"manifest.json": manifest(t, sc.base.Hash, map[string]int{"mail": 1}), readPath: readMail,
	})
	res, on := sc.merge(t, archiveLayout(archiveRule))
	if on[readPath] || len(res.Report.ArchiveRefused) != 0 {
		t.Fatalf("the honest archive did not count: on tip %v, refused %+v", on[readPath], res.Report.ArchiveRefused)
	}
}

// BenchmarkArchivedMerge: a merge that lets n archived read mails go
// checks the archive once (its manifest, and every record against the
// state commit it names, walking both trees side by side).
func BenchmarkArchivedMerge(b *testing.B) {
	const n = 5000
	ctx := context.Background()
	dir := gitstatetest.NewRepo(b)
	s, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Init(ctx, func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("init"))
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	var paths []string
	put := func(del bool, extra ...string) gitstate.Commit {
		c, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(meta("put"))
			for _, p := range paths {
				if del {
					if err := tx.Delete(p); err != nil {
						return err
					}
				} else if err := tx.PutRaw(p, []byte(readMail+p)); err != nil {
					return err
				}
			}
			for i := 0; i+1 < len(extra); i += 2 {
				if err := tx.PutRaw(extra[i], []byte(extra[i+1])); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	for i := 0; i < n; i++ {
		paths = append(paths, fmt.Sprintf("mail/m%05d.json", i))
	}
	base := put(false)
	theirs := put(true)
	resetState(b, dir, base.Hash)
	ours := put(false, "notes/ours.json", "1")
	// the archive: the base's blobs at their paths, and a manifest
	index := filepath.Join(b.TempDir(), "index")
	list := gitstatetest.Git(b, dir, "ls-tree", "-r", base.Hash, "mail")
	man := gitstatetest.WriteObject(b, dir, "blob", []byte(fmt.Sprintf(`{"state_tip":%q,"records":{"mail":%d}}`, base.Hash, n)))
	cmd := exec.Command("git", "update-index", "--add", "--index-info")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+index)
	cmd.Stdin = strings.NewReader(list + "\n100644 blob " + man + "\tmanifest.json\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	cmd = exec.Command("git", "write-tree")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+index)
	tree, err := cmd.Output()
	if err != nil {
		b.Fatal(err)
	}
	arc := gitstatetest.CommitTree(b, dir, strings.TrimSpace(string(tree)), "archive")
	gitstatetest.Git(b, dir, "update-ref", gitstate.RecordArchivePrefix+"2026-01-01-bench", arc)
	layout := archiveLayout(archiveRule)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		resetState(b, dir, ours.Hash)
		b.StartTimer()
		res, err := s.MergeValidated(ctx, theirs.Hash, (&testResolver{}).resolve, gitstate.Check{Layout: layout}, finishMeta)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Report.Kept) != 0 || len(res.Report.ArchiveRefused) != 0 {
			b.Fatalf("kept %d, refused %+v", len(res.Report.Kept), res.Report.ArchiveRefused[:1])
		}
	}
}

// TestArchiveOfAnOldVersion: an archive of a version older than the one
// both sides have (an instance archived as it was when it ended, before it
// was started again) does not delete the record, though that version had
// ended and its state commit is in the deleting side's history.
func TestArchiveOfAnOldVersion(t *testing.T) {
	s, dir := openInit(t)
	old := putRaw(t, s, readPath, readMail) // ended
	const live = `{"mail":"live again"}`
	base := putRaw(t, s, readPath, live)
	theirs := putRaw(t, s, readPath, "")
	resetState(t, dir, base.Hash)
	putRaw(t, s, "notes/ours.json", "1")
	writeArchive(t, dir, gitstate.RecordArchivePrefix+"2026-01-01-old", map[string]string{
		"manifest.json": manifest(t, old.Hash, map[string]int{"mail": 1}),
		readPath:        readMail,
	})
	var report gitstate.MergeReport
	_, err := s.MergeValidated(context.Background(), theirs.Hash, (&testResolver{}).resolve, gitstate.Check{Layout: archiveLayout(archiveRule)},
		func(tx *gitstate.Tx, r gitstate.MergeReport) error { report = r; return finishMeta(tx, r) })
	if err != nil {
		t.Fatal(err)
	}
	if got := gitstatetest.Git(t, dir, "cat-file", "-p", gitstate.RefState+":"+readPath); got != live {
		t.Fatalf("the record on the tip is %q, want %q", got, live)
	}
	if len(report.ArchiveRefused) != 1 || !strings.Contains(report.ArchiveRefused[0].Reason, "it holds an older version than the side that kept the record") {
		t.Fatalf("ArchiveRefused = %+v", report.ArchiveRefused)
	}
}

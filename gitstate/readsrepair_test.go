package gitstate_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// readIn commits a read (a transaction that changes nothing) audited as
// tool: on this machine's reads ref of the store's day.
func readIn(t *testing.T, s *gitstate.Store, tool string) gitstate.Commit {
	t.Helper()
	c, err := s.Update(context.Background(), func(tx *gitstate.Tx) error {
		var r rec
		tx.SetMeta(meta(tool))
		return tx.Get("config/version.json", &r)
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Ref == "" || c.Ref == gitstate.RefState {
		t.Fatalf("read %s went to %q", tool, c.Ref)
	}
	return c
}

// chainTools is the Codex-Tool of each commit of a chain, oldest first,
// with each commit's author date.
func chainTools(t *testing.T, dir, ref string) []string {
	t.Helper()
	out := gitstatetest.Git(t, dir, "log", "--reverse", "--format=%(trailers:key=Codex-Tool,valueonly,separator=)@%at", ref)
	return strings.Split(out, "\n")
}

// reopen closes s and opens the repository at dir again, as the next
// process would: the store keeps the packs it read open, and an object
// removed from under it stays readable there.
func reopen(t *testing.T, s *gitstate.Store, dir string, now func() time.Time) *gitstate.Store {
	t.Helper()
	s.Close()
	s, err := gitstate.Open(dir, gitstate.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func fsckClean(t *testing.T, dir string) {
	t.Helper()
	if out, err := gitstatetest.GitErr(dir, "fsck", "--strict", "--no-dangling"); err != nil {
		t.Fatalf("fsck: %v\n%s", err, out)
	}
}

// TestRestoreRepairsReadsOfALostTree: the state's tip lost a subtree (git
// gc --prune=now beside writers), and so did the reads of that tip, whose
// commits carry the tip's tree. After Restore, RepairReads rewrites the
// day's chain: every read keeps its audit record (message, author,
// times), the reads of the lost tree name what is left of it and say what
// is gone, the reads before them keep their commits, and fsck is clean.
// A day that reads whole is not touched; a second repair finds nothing.
func TestRestoreRepairsReadsOfALostTree(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { now = now.Add(time.Second); return now }
	s, dir := openReadsLocal(t, clock)
	put := func(path string) {
		t.Helper()
		if _, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(meta("put"))
			return tx.Put(path, rec{N: 1})
		}); err != nil {
			t.Fatal(err)
		}
	}
	put("mail/bob/ab/m-1.json")
	good := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)
	readIn(t, s, "day1-a")
	now = now.AddDate(0, 0, 1) // 2 March
	b1 := readIn(t, s, "day2-a")
	put("mail/bob/ab/m-2.json")
	tipTree := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState+"^{tree}")
	b2 := readIn(t, s, "day2-b")
	readIn(t, s, "day2-c")
	machine, _ := s.Machine()
	day1, day2 := gitstate.ReadsPrefix+machine+"/2026-03-01", gitstate.ReadsPrefix+machine+"/2026-03-02"
	oldDay1 := gitstatetest.Git(t, dir, "rev-parse", day1)
	oldDay2 := gitstatetest.Git(t, dir, "rev-parse", day2)
	toolsBefore := chainTools(t, dir, day2)
	lost := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState+":mail/bob/ab")
	gitstatetest.WaitForMaintenance(t, dir)
	removeObject(t, dir, lost)
	// (a new process: this one still has the pack it read open)
	s = reopen(t, s, dir, clock)
	if _, err := gitstatetest.GitErr(dir, "fsck", "--strict", "--no-dangling"); err == nil {
		t.Fatal("fsck is clean with the tree gone")
	}

	if _, err := s.Restore(ctx, good, meta("restore")); err != nil {
		t.Fatal(err)
	}
	if out, err := gitstatetest.GitErr(dir, "fsck", "--strict", "--no-dangling"); err == nil || !strings.Contains(out, lost) {
		t.Fatalf("before the reads are repaired, fsck: %v\n%s", err, out)
	}
	reps, err := s.RepairReads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 1 {
		t.Fatalf("repairs %+v, want day 2's only", reps)
	}
	r := reps[0]
	newDay2 := gitstatetest.Git(t, dir, "rev-parse", day2)
	if r.Ref != day2 || r.Old != oldDay2 || r.New != newDay2 || r.Dropped() || r.Reads != 3 || r.NoState != 2 || r.Lost != 0 || r.CutAt != "" {
		t.Errorf("repair %+v (ref now %s)", r, newDay2)
	}
	fsckClean(t, dir)
	if got := gitstatetest.Git(t, dir, "rev-parse", day1); got != oldDay1 {
		t.Errorf("day 1, whole, moved")
	}
	// the audit records are all there, in order, at their times
	if got := chainTools(t, dir, day2); strings.Join(got, " ") != strings.Join(toolsBefore, " ") {
		t.Errorf("day 2's reads %v, were %v", got, toolsBefore)
	}
	// the read before the loss kept its commit; the two after it were
	// written again, saying what they replace and what is gone
	if got := gitstatetest.Git(t, dir, "rev-list", "--reverse", day2); !strings.HasPrefix(got, b1.Hash+"\n") {
		t.Errorf("the first read was rewritten: %s", got)
	}
	msg := gitstatetest.Git(t, dir, "log", "-1", "--format=%B", day2+"~1")
	for _, want := range []string{
		"Codex-Tool: day2-b\n",
		gitstate.TrailerReadAt + ": ",
		gitstate.TrailerRepairedFrom + ": " + b2.Hash + "\n",
		gitstate.TrailerTreeLost + ": " + tipTree + " (1 object(s) gone: mail/bob/ab)\n",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("repaired read's message lacks %q:\n%s", want, msg)
		}
	}
	if !strings.HasSuffix(msg, "Codex-Clock: 3") {
		t.Errorf("Codex-Clock is not last:\n%s", msg)
	}
	if got := gitstatetest.Git(t, dir, "log", "-1", "--format=%an <%ae> %at %cn %ct", day2+"~1"); got != gitstatetest.Git(t, dir, "log", "-1", "--format=%an <%ae> %at %cn %ct", b2.Hash) {
		t.Errorf("signature %q changed", got)
	}
	// what is left of the tree: the records that are still there
	if got := gitstatetest.Git(t, dir, "ls-tree", "-r", "--name-only", day2+"~1"); got != "config/version.json" {
		t.Errorf("repaired read's tree: %q", got)
	}
	// the views read it (the state: init, the first put, the restore; the
	// lost put is left behind), and reads go on on the repaired chain
	var n int
	refs, _ := s.ReadsRefs()
	if err := s.EventsOf(ctx, append([]string{""}, refs...), func(gitstate.Event) bool { n++; return true }); err != nil || n != 3+4 {
		t.Errorf("log with reads: %d events, %v", n, err)
	}
	after := readIn(t, s, "day2-d")
	if after.Parent != newDay2 {
		t.Errorf("a read after the repair has parent %s, want %s", after.Parent, newDay2)
	}
	fsckClean(t, dir)
	if reps, err := s.RepairReads(ctx); err != nil || len(reps) != 0 {
		t.Errorf("second repair: %+v, %v", reps, err)
	}
}

// TestRepairReadsCutFoldedAndGone: a chain cut by a missing commit keeps
// the reads after the cut (the oldest parentless, naming the cut); a
// folded day whose reads.jsonl is gone keeps its fold's commit and counts
// its reads lost; a ref whose tip commit is gone holds nothing readable
// and is dropped, a fetched machine's ref as well as this machine's.
func TestRepairReadsCutFoldedAndGone(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { now = now.Add(time.Second); return now }
	s, dir := openReadsLocal(t, clock)
	readIn(t, s, "f1")
	readIn(t, s, "f2")
	now = now.AddDate(0, 0, 1) // 2 March
	x1 := readIn(t, s, "x1")
	readIn(t, s, "x2")
	readIn(t, s, "x3")
	now = now.AddDate(0, 0, 1) // 3 March
	gone := readIn(t, s, "g1")
	now = now.AddDate(0, 0, 1) // 4 March
	// the 1st only
	if f, err := s.FoldReads(ctx, time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), now); err != nil || len(f) != 1 {
		t.Fatalf("folded %v: %v", f, err)
	}
	machine, _ := s.Machine()
	day := func(d string) string { return gitstate.ReadsPrefix + machine + "/" + d }
	// another machine's reads, as sync --reads fetches them: the same 3rd
	fetched := "refs/codex/remotes/origin/reads/0123456789ab/2026-03-03"
	gitstatetest.Git(t, dir, "update-ref", fetched, gone.Hash)
	folded := gitstatetest.Git(t, dir, "rev-parse", day("2026-03-01"))
	oldCut := gitstatetest.Git(t, dir, "rev-parse", day("2026-03-02"))
	gitstatetest.WaitForMaintenance(t, dir)
	removeObject(t, dir, gitstatetest.Git(t, dir, "rev-parse", folded+":"+gitstate.FoldedReadsFile))
	removeObject(t, dir, x1.Hash)
	removeObject(t, dir, gone.Hash)
	s = reopen(t, s, dir, clock)

	reps, err := s.RepairReads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]gitstate.ReadsRepair{}
	for _, r := range reps {
		got[r.Ref] = r
	}
	if len(reps) != 4 {
		t.Errorf("repairs %+v, want 4", reps)
	}
	if r := got[day("2026-03-02")]; r.Old != oldCut || r.Reads != 2 || r.Lost != 0 || r.CutAt != x1.Hash || r.Dropped() {
		t.Errorf("cut chain: %+v", r)
	}
	if got := chainTools(t, dir, day("2026-03-02")); len(got) != 2 || !strings.HasPrefix(got[0], "x2@") || !strings.HasPrefix(got[1], "x3@") {
		t.Errorf("cut chain holds %v", got)
	}
	msg := gitstatetest.Git(t, dir, "log", "-1", "--format=%B", day("2026-03-02")+"~1")
	if !strings.Contains(msg, gitstate.TrailerReadsLost+": "+x1.Hash+" ") || strings.Contains(msg, gitstate.TrailerTreeLost) {
		t.Errorf("oldest read kept:\n%s", msg)
	}
	if p := gitstatetest.Git(t, dir, "log", "-1", "--format=%P", day("2026-03-02")+"~1"); p != "" {
		t.Errorf("oldest read kept has parents %s", p)
	}
	if r := got[day("2026-03-01")]; r.Old != folded || r.Reads != 0 || r.Lost != 2 || r.Dropped() {
		t.Errorf("folded day: %+v", r)
	}
	msg = gitstatetest.Git(t, dir, "log", "-1", "--format=%B", day("2026-03-01"))
	if !strings.Contains(msg, gitstate.TrailerFolded+": 2\n") || !strings.Contains(msg, gitstate.TrailerTreeLost+": ") || !strings.Contains(msg, gitstate.TrailerRepairedFrom+": "+folded) {
		t.Errorf("folded day's commit:\n%s", msg)
	}
	for _, ref := range []string{day("2026-03-03"), fetched} {
		if r := got[ref]; !r.Dropped() || r.Old != gone.Hash || r.CutAt != gone.Hash {
			t.Errorf("%s: %+v, want dropped", ref, r)
		}
		if _, err := gitstatetest.GitErr(dir, "rev-parse", "--verify", "-q", ref); err == nil {
			t.Errorf("%s is still there", ref)
		}
	}
	fsckClean(t, dir)
	if reps, err := s.RepairReads(ctx); err != nil || len(reps) != 0 {
		t.Errorf("second repair: %+v, %v", reps, err)
	}
}

// A call that extends today's chain while it is being repaired is kept:
// the ref moves only from the tip the repair read, so the repair reads the
// chain again (under the writer lock, where no call can extend it) and the
// new read is written on top of the repaired ones. And reads made by
// another process all through repairs all end on the chain.
func TestRepairReadsBesideReads(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { now = now.Add(time.Millisecond); return now }
	s, dir := openReadsLocal(t, clock)
	put := func(path string) {
		t.Helper()
		if _, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(meta("put"))
			return tx.Put(path, rec{N: 1})
		}); err != nil {
			t.Fatal(err)
		}
	}
	put("agents/a.json")
	good := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)
	put("agents/b.json")
	for i := 0; i < 3; i++ {
		readIn(t, s, "before")
	}
	machine, _ := s.Machine()
	day := gitstate.ReadsPrefix + machine + "/2026-03-01"
	// the tip's tree, and so the reads' tree, is gone; the state is
	// restored to the one before
	gitstatetest.WaitForMaintenance(t, dir)
	removeObject(t, dir, gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState+"^{tree}"))
	s = reopen(t, s, dir, clock)
	if _, err := s.Restore(ctx, good, meta("restore")); err != nil {
		t.Fatal(err)
	}
	other, err := gitstate.Open(dir, gitstate.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	planned := 0
	s.SetPhaseHook(func(name string) {
		if name == "reads-planned" {
			if planned++; planned == 1 {
				readIn(t, other, "during")
			}
		}
	})
	reps, err := s.RepairReads(ctx)
	s.SetPhaseHook(nil)
	if err != nil || len(reps) != 1 || reps[0].Reads != 4 || reps[0].NoState != 3 {
		t.Fatalf("repair %+v: %v", reps, err)
	}
	if planned != 2 {
		t.Errorf("planned %d times, want 2 (once more after the chain moved)", planned)
	}
	if got := strings.Join(chainTools(t, dir, day), " "); !strings.HasPrefix(got, "before@") || strings.Count(got, "before@") != 3 || !strings.Contains(got, " during@") {
		t.Errorf("chain %s", got)
	}
	fsckClean(t, dir)

	// break it again (a newest read whose tree is gone), and read on from
	// the other store all through the repairs
	gone := gitstatetest.WriteTree(t, dir, []gitstatetest.TreeEntry{{Mode: "100644", Name: "gone", Hash: gitstatetest.WriteObject(t, dir, "blob", []byte("gone\n"))}})
	lost := gitstatetest.CommitTree(t, dir, gone, "lost\n\nCodex-Tool: lost\nCodex-Clock: 2\n", gitstatetest.Git(t, dir, "rev-parse", day))
	gitstatetest.Git(t, dir, "update-ref", day, lost)
	gitstatetest.WaitForMaintenance(t, dir)
	removeObject(t, dir, gone)
	done := make(chan int)
	go func() {
		n := 0
		for ; n < 30; n++ {
			if _, err := other.Update(ctx, func(tx *gitstate.Tx) error { tx.SetMeta(meta("beside")); return nil }); err != nil {
				t.Error(err)
				break
			}
		}
		done <- n
	}()
	for {
		if _, err := s.RepairReads(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case n := <-done:
			if reps, err := s.RepairReads(ctx); err != nil {
				t.Fatal(err)
			} else if len(reps) != 0 {
				t.Logf("repaired after the reads: %+v", reps)
			}
			got := strings.Join(chainTools(t, dir, day), " ")
			if c := strings.Count(got, "beside@"); c != n || strings.Count(got, "lost@") != 1 || strings.Count(got, "before@") != 3 {
				t.Errorf("%d reads beside the repair, the chain holds %d: %s", n, c, got)
			}
			fsckClean(t, dir)
			return
		default:
		}
	}
}

package gitstate_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// FoldReads replaces each old day's chain of read commits with one commit
// holding reads.jsonl, a line per read with its commit, author, time and
// message; today's chain and days inside the window stay as they are, and
// a day already folded is not folded again.
func TestFoldReads(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	s, dir := openReadsLocal(t, func() time.Time { now = now.Add(time.Second); return now })
	read := func(tool string) {
		t.Helper()
		if _, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			var r rec
			tx.SetMeta(meta(tool))
			return tx.Get("config/version.json", &r)
		}); err != nil {
			t.Fatal(err)
		}
	}
	read("day1-a")
	read("day1-b")
	read("day1-c")
	now = now.AddDate(0, 0, 1) // 2 March
	read("day2-a")
	now = now.AddDate(0, 0, 2) // 4 March: today
	read("today")
	machine, _ := s.Machine()
	ref := func(day string) string { return gitstate.ReadsPrefix + machine + "/" + day }
	day2 := gitstatetest.Git(t, dir, "rev-parse", ref("2026-03-02"))

	// a window of two days from the 4th: the 1st ended before it, the 2nd did not
	folded, err := s.FoldReads(ctx, now.AddDate(0, 0, -2), now)
	if err != nil {
		t.Fatal(err)
	}
	if len(folded) != 1 || folded[0] != ref("2026-03-01") {
		t.Fatalf("folded %v, want the 1st only", folded)
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", ref("2026-03-02")); got != day2 {
		t.Errorf("the 2nd, inside the window, moved")
	}
	if n := gitstatetest.Git(t, dir, "rev-list", "--count", ref("2026-03-01")); n != "1" {
		t.Errorf("folded day has %s commits, want 1", n)
	}
	msg := gitstatetest.Git(t, dir, "log", "-1", "--format=%B", ref("2026-03-01"))
	if !strings.Contains(msg, gitstate.TrailerFolded+": 3") || !strings.Contains(msg, gitstate.TrailerReadAt+": ") {
		t.Errorf("fold's message:\n%s", msg)
	}
	lines := strings.Split(gitstatetest.Git(t, dir, "cat-file", "-p", ref("2026-03-01")+":"+gitstate.FoldedReadsFile), "\n")
	if len(lines) != 3 {
		t.Fatalf("reads.jsonl has %d lines, want 3", len(lines))
	}
	for i, want := range []string{"day1-a", "day1-b", "day1-c"} {
		var r gitstate.FoldedRead
		if err := json.Unmarshal([]byte(lines[i]), &r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.Message, "Codex-Tool: "+want) || len(r.Commit) != 40 || r.Time.IsZero() || r.Author == "" {
			t.Errorf("line %d: %+v, want the read %s", i, r, want)
		}
	}

	// everything older than now: the 2nd folds, today never, the 1st not again
	folded, err = s.FoldReads(ctx, now, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(folded) != 1 || folded[0] != ref("2026-03-02") {
		t.Fatalf("second fold %v, want the 2nd only", folded)
	}
	if n := gitstatetest.Git(t, dir, "rev-list", "--count", ref("2026-03-04")); n != "1" {
		t.Errorf("today's chain: %s commits", n)
	}
	if strings.Contains(gitstatetest.Git(t, dir, "log", "-1", "--format=%B", ref("2026-03-04")), gitstate.TrailerFolded) {
		t.Error("today's chain was folded")
	}
}

// A folded day still shows who read what: EventsOf over the state and the
// reads refs lists each read of the fold with its own commit id, author,
// time and trailers, in its place among the changes, marked FoldedIn; the
// fold commit itself is not an event.
func TestEventsUnfoldFoldedDay(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	s, dir := openReadsLocal(t, func() time.Time { now = now.Add(time.Second); return now })
	read := func(tool string) {
		t.Helper()
		if _, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			var r rec
			tx.SetMeta(meta(tool))
			return tx.Get("config/version.json", &r)
		}); err != nil {
			t.Fatal(err)
		}
	}
	change := func(tool string) {
		t.Helper()
		if _, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(meta(tool))
			return tx.Put("x/"+tool+".json", rec{N: 1})
		}); err != nil {
			t.Fatal(err)
		}
	}
	change("c1")
	read("r1")
	change("c2")
	read("r2")
	read("r3")
	change("c3")
	now = now.AddDate(0, 0, 2)
	read("today")
	list := func() (tools, commits []string, folds map[string]string) {
		t.Helper()
		refs, err := s.ReadsRefs()
		if err != nil {
			t.Fatal(err)
		}
		folds = map[string]string{}
		err = s.EventsOf(ctx, append([]string{gitstate.RefState}, refs...), func(ev gitstate.Event) bool {
			tool := ev.Get(gitstate.TrailerTool)
			tools = append(tools, tool)
			commits = append(commits, ev.Commit)
			if ev.FoldedIn != "" {
				folds[tool] = ev.FoldedIn
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		return tools, commits, folds
	}
	wantTools, wantCommits, folds := list()
	if len(folds) != 0 {
		t.Fatalf("before the fold, reads marked folded: %v", folds)
	}
	folded, err := s.FoldReads(ctx, now.AddDate(0, 0, -1), now)
	if err != nil || len(folded) != 1 {
		t.Fatalf("FoldReads = %v, %v", folded, err)
	}
	fold := gitstatetest.Git(t, dir, "rev-parse", folded[0])
	tools, commits, folds := list()
	if strings.Join(tools, " ") != strings.Join(wantTools, " ") || strings.Join(commits, " ") != strings.Join(wantCommits, " ") {
		t.Fatalf("after the fold the events are\n%v\n%v\nwant\n%v\n%v", tools, commits, wantTools, wantCommits)
	}
	for _, r := range []string{"r1", "r2", "r3"} {
		if folds[r] != fold {
			t.Errorf("read %s: FoldedIn %q, want the fold %s", r, folds[r], fold)
		}
	}
	if len(folds) != 3 {
		t.Errorf("folded reads: %v, want r1, r2, r3", folds)
	}
	// each read keeps its audit record: caller and time, and the state it read
	err = s.EventsOf(ctx, []string{folded[0]}, func(ev gitstate.Event) bool {
		if ev.Get(gitstate.TrailerActor) != "tester" || ev.Get(gitstate.TrailerReadAt) == "" || ev.Time.IsZero() || ev.Clock == 0 {
			t.Errorf("folded read %+v", ev)
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A read of a folded day is found by its own commit id (whole or
// abbreviated) once git has pruned that commit: Event marks it FoldedIn,
// Changes says it changed nothing. An id no read has is still not found.
func TestEventOfFoldedReadAfterPrune(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	s, dir := openReadsLocal(t, func() time.Time { now = now.Add(time.Second); return now })
	for _, tool := range []string{"r1", "r2"} {
		if _, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			var r rec
			tx.SetMeta(meta(tool))
			return tx.Get("config/version.json", &r)
		}); err != nil {
			t.Fatal(err)
		}
	}
	machine, _ := s.Machine()
	r1 := gitstatetest.Git(t, dir, "rev-parse", gitstate.ReadsPrefix+machine+"/2026-03-01~1")
	now = now.AddDate(0, 0, 2)
	folded, err := s.FoldReads(ctx, now.AddDate(0, 0, -1), now)
	if err != nil || len(folded) != 1 {
		t.Fatalf("FoldReads = %v, %v", folded, err)
	}
	fold := gitstatetest.Git(t, dir, "rev-parse", folded[0])
	gitstatetest.Git(t, dir, "gc", "-q", "--prune=now")
	if _, err := exec.Command("git", "-C", dir, "cat-file", "-e", r1).Output(); err == nil {
		t.Fatalf("git gc --prune=now kept the folded read %s", r1)
	}
	// a new process, as `git codex show` is (this one still reads the
	// packs it opened before git deleted them)
	s.Close()
	s, err = gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, rev := range []string{r1, r1[:10]} {
		ev, err := s.Event(ctx, rev)
		if err != nil {
			t.Fatalf("Event(%s) after the prune: %v", rev, err)
		}
		if ev.Commit != r1 || ev.FoldedIn != fold || ev.Get(gitstate.TrailerTool) != "r1" || !ev.IsRead() || ev.Changed {
			t.Fatalf("Event(%s) = %+v, want the read r1 folded into %s", rev, ev, fold)
		}
		ch, err := s.Changes(ctx, rev)
		if err != nil || len(ch) != 0 {
			t.Fatalf("Changes(%s) = %v, %v; want none", rev, ch, err)
		}
	}
	if _, err := s.Event(ctx, strings.Repeat("ab", 20)); !errors.Is(err, gitstate.ErrNotFound) {
		t.Fatalf("Event of an unknown id: %v, want ErrNotFound", err)
	}
}

// ReadsToFold lists what FoldReads would fold (this machine's days that
// ended before the cutoff, not folded yet), and nothing once they are.
func TestReadsToFold(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	s, _ := openReadsLocal(t, func() time.Time { now = now.Add(time.Second); return now })
	read := func() {
		t.Helper()
		if _, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			var r rec
			tx.SetMeta(meta("read"))
			return tx.Get("config/version.json", &r)
		}); err != nil {
			t.Fatal(err)
		}
	}
	read()
	now = now.AddDate(0, 0, 1)
	read()
	now = now.AddDate(0, 0, 1) // 3 March: today
	read()
	machine, _ := s.Machine()
	day := func(d string) string { return gitstate.ReadsPrefix + machine + "/" + d }
	got, err := s.ReadsToFold(ctx, now, now)
	if err != nil || strings.Join(got, " ") != day("2026-03-01")+" "+day("2026-03-02") {
		t.Fatalf("ReadsToFold = %v, %v; want the 1st and the 2nd, not today", got, err)
	}
	if got, _ := s.ReadsToFold(ctx, now.AddDate(0, 0, -1), now); strings.Join(got, " ") != day("2026-03-01") {
		t.Fatalf("with a day's window: %v, want the 1st", got)
	}
	if _, err := s.FoldReads(ctx, now, now); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ReadsToFold(ctx, now, now); err != nil || len(got) != 0 {
		t.Fatalf("after the fold: %v, %v; want none", got, err)
	}
}

// A fold leaves a day of read commits unreachable: FoldReads sets
// gc.cruftPacks=true first, so that git gc packs them into a cruft pack
// instead of writing each out as a loose file (cruft.go); a value the
// user set, false included, stays.
func TestFoldReadsPrefersCruftPacks(t *testing.T) {
	ctx := context.Background()
	for _, user := range []string{"", "false"} {
		t.Run("user="+user, func(t *testing.T) {
			now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
			s, dir := openReadsLocal(t, func() time.Time { now = now.Add(time.Second); return now })
			if user != "" {
				gitstatetest.Git(t, dir, "config", "gc.cruftPacks", user)
			}
			for i := 0; i < 30; i++ {
				if _, err := s.Update(ctx, func(tx *gitstate.Tx) error {
					var r rec
					tx.SetMeta(meta("read"))
					return tx.Get("config/version.json", &r)
				}); err != nil {
					t.Fatal(err)
				}
			}
			if got := configGet(dir, "gc.cruftPacks"); got != user {
				t.Fatalf("before any fold gc.cruftPacks = %q, want %q", got, user)
			}
			now = now.AddDate(0, 0, 2)
			if folded, err := s.FoldReads(ctx, now, now); err != nil || len(folded) != 1 {
				t.Fatalf("folded %v, %v", folded, err)
			}
			want := user
			if want == "" {
				want = "true"
			}
			if got := configGet(dir, "gc.cruftPacks"); got != want {
				t.Fatalf("after a fold gc.cruftPacks = %q, want %q", got, want)
			}
			gitstatetest.WaitForMaintenance(t, dir)
			gitstatetest.Git(t, dir, "gc", "-q")
			loose := countLoose(t, dir)
			switch {
			case user == "" && loose != 0:
				t.Errorf("git gc after a fold left %d loose objects; the 30 folded read commits belong in a cruft pack", loose)
			case user == "false" && loose < 30:
				// the user's choice holds: git explodes them as it does
				t.Errorf("gc.cruftPacks=false: git gc left %d loose objects, want the 30 folded commits", loose)
			}
		})
	}
}

// configGet is git config --get of key in dir, "" when unset.
func configGet(dir, key string) string {
	out, _ := exec.Command("git", "-C", dir, "config", "--get", key).Output()
	return strings.TrimSpace(string(out))
}

// countLoose is git count-objects' count of loose objects.
func countLoose(t *testing.T, dir string) int {
	t.Helper()
	for _, line := range strings.Split(gitstatetest.Git(t, dir, "count-objects", "-v"), "\n") {
		if v, ok := strings.CutPrefix(line, "count: "); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("count-objects said no count")
	return 0
}

// A fold is committed when retention runs, days after its reads, yet a
// walk from the tips reads it only once it reaches its newest read
// (Codex-Folded-Until): the
// newest events of the days since come first without the day's
// reads.jsonl being inflated and parsed (issue 27: every status unfolded
// a day of a team's polling). Shown with a fold whose reads.jsonl is not
// in the repository: the walk of the newer events succeeds, and a walk
// that reaches the day fails there.
func TestEventsReadAFoldOnlyAtItsReads(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	s, dir := openReadsLocal(t, func() time.Time { now = now.Add(time.Second); return now })
	for _, tool := range []string{"r1", "r2"} {
		if _, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			var r rec
			tx.SetMeta(meta(tool))
			return tx.Get("config/version.json", &r)
		}); err != nil {
			t.Fatal(err)
		}
	}
	now = now.AddDate(0, 0, 2) // the 3rd
	for _, tool := range []string{"c1", "c2", "c3"} {
		if _, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(meta(tool))
			return tx.Put("x/"+tool+".json", rec{N: 1})
		}); err != nil {
			t.Fatal(err)
		}
	}
	machine, _ := s.Machine()
	r2 := gitstatetest.Git(t, dir, "log", "-1", "--format=%cI", gitstate.ReadsPrefix+machine+"/2026-03-01")
	now = now.AddDate(0, 0, 1) // the 4th: retention folds the 1st
	folded, err := s.FoldReads(ctx, now.AddDate(0, 0, -1), now)
	if err != nil || len(folded) != 1 {
		t.Fatalf("FoldReads = %v, %v", folded, err)
	}
	// the fold says when its newest read, r2, was made
	msg := gitstatetest.Git(t, dir, "log", "-1", "--format=%B", folded[0])
	if !strings.Contains(msg, gitstate.TrailerFoldedUntil+": "+strings.Replace(r2, "+00:00", "Z", 1)+"\n") {
		t.Fatalf("the fold's message\n%s\nsays not that its newest read is r2's (%s)", msg, r2)
	}
	// the same fold, its reads.jsonl absent
	when := gitstatetest.Git(t, dir, "log", "-1", "--format=%cI", folded[0])
	mktree := exec.Command("git", "-C", dir, "mktree", "--missing")
	mktree.Stdin = strings.NewReader("100644 blob " + strings.Repeat("5a", 20) + "\t" + gitstate.FoldedReadsFile + "\n")
	tree, err := mktree.Output()
	if err != nil {
		t.Fatal(err)
	}
	commit := exec.Command("git", "-C", dir, "commit-tree", strings.TrimSpace(string(tree)), "-m", msg)
	commit.Env = append(os.Environ(), "GIT_COMMITTER_DATE="+when, "GIT_AUTHOR_DATE="+when)
	fold, err := commit.Output()
	if err != nil {
		t.Fatal(err)
	}
	gitstatetest.Git(t, dir, "update-ref", folded[0], strings.TrimSpace(string(fold)))

	refs, err := s.ReadsRefs()
	if err != nil {
		t.Fatal(err)
	}
	revs := append([]string{gitstate.RefState}, refs...)
	var tools []string
	err = s.EventsOf(ctx, revs, func(ev gitstate.Event) bool {
		tools = append(tools, ev.Get(gitstate.TrailerTool))
		return len(tools) < 3
	})
	if err != nil || strings.Join(tools, " ") != "c3 c2 c1" {
		t.Fatalf("the newest three events: %v, %v; want c3 c2 c1, the fold unread", tools, err)
	}
	tools = nil
	err = s.EventsOf(ctx, revs, func(ev gitstate.Event) bool {
		tools = append(tools, ev.Get(gitstate.TrailerTool))
		return true
	})
	if err == nil || !strings.Contains(err.Error(), "read the fold") || strings.Join(tools, " ") != "c3 c2 c1" {
		t.Fatalf("the whole walk: %v, %v; want c3 c2 c1, then the fold's reads.jsonl missing", tools, err)
	}
}

// A fold written before folds said when their newest read was made gets
// that trailer at the next fold of this machine's reads (an archive): the
// same tree and reads, so that walks read it only once they reach them.
func TestFoldReadsMarksAnOldFold(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	s, dir := openReadsLocal(t, func() time.Time { now = now.Add(time.Second); return now })
	for _, tool := range []string{"r1", "r2"} {
		if _, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			var r rec
			tx.SetMeta(meta(tool))
			return tx.Get("config/version.json", &r)
		}); err != nil {
			t.Fatal(err)
		}
	}
	machine, _ := s.Machine()
	ref := gitstate.ReadsPrefix + machine + "/2026-03-01"
	r2 := gitstatetest.Git(t, dir, "log", "-1", "--format=%cI", ref)
	now = now.AddDate(0, 0, 3)
	if folded, err := s.FoldReads(ctx, now.AddDate(0, 0, -1), now); err != nil || len(folded) != 1 {
		t.Fatalf("FoldReads = %v, %v", folded, err)
	}
	// the fold as an older version wrote it: no Codex-Folded-Until
	var old []string
	for _, line := range strings.Split(gitstatetest.Git(t, dir, "log", "-1", "--format=%B", ref), "\n") {
		if !strings.HasPrefix(line, gitstate.TrailerFoldedUntil+": ") {
			old = append(old, line)
		}
	}
	tree := gitstatetest.Git(t, dir, "rev-parse", ref+"^{tree}")
	commit := exec.Command("git", "-C", dir, "commit-tree", tree, "-m", strings.Join(old, "\n"))
	commit.Env = append(os.Environ(), "GIT_COMMITTER_DATE=2026-03-04T10:00:00Z", "GIT_AUTHOR_DATE=2026-03-04T10:00:00Z")
	out, err := commit.Output()
	if err != nil {
		t.Fatal(err)
	}
	oldFold := strings.TrimSpace(string(out))
	gitstatetest.Git(t, dir, "update-ref", ref, oldFold)

	if folded, err := s.FoldReads(ctx, now.AddDate(0, 0, -1), now); err != nil || len(folded) != 0 {
		t.Fatalf("FoldReads of a day folded already = %v, %v; want nothing folded", folded, err)
	}
	marked := gitstatetest.Git(t, dir, "rev-parse", ref)
	if marked == oldFold {
		t.Fatalf("the old fold was left without %s", gitstate.TrailerFoldedUntil)
	}
	msg := gitstatetest.Git(t, dir, "log", "-1", "--format=%B", ref)
	if !strings.Contains(msg, gitstate.TrailerFoldedUntil+": "+strings.Replace(r2, "+00:00", "Z", 1)+"\n") || !strings.Contains(msg, gitstate.TrailerFolded+": 2\n") {
		t.Fatalf("the marked fold's message:\n%s", msg)
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", ref+"^{tree}"); got != tree {
		t.Fatalf("the marked fold's tree is %s, was %s", got, tree)
	}
	var tools []string
	if err := s.EventsOf(ctx, []string{ref}, func(ev gitstate.Event) bool {
		tools = append(tools, ev.Get(gitstate.TrailerTool))
		return true
	}); err != nil || strings.Join(tools, " ") != "r2 r1" {
		t.Fatalf("the marked fold's reads: %v, %v", tools, err)
	}
	// marked once: the next archive leaves it as it is
	if _, err := s.FoldReads(ctx, now.AddDate(0, 0, -1), now); err != nil {
		t.Fatal(err)
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", ref); got != marked {
		t.Fatalf("the marked fold moved again")
	}
}

package gitstate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
)

// TestKeptCommitsWalkAsEventsOf: a walk through KeepCommits shows what
// EventsOf shows (the same events, in the same order, changed, folded and
// cut off alike), whole and cut short as status cuts it, from a fresh
// store each time (another process) with the file the last one left:
// after changes, after reads that move the reads ref, after a day's reads
// are folded. A walk that read only kept commits leaves the file as it
// was; one that read others replaces it with what it read.
func TestKeptCommitsWalkAsEventsOf(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	s, dir := openReadsLocal(t, func() time.Time { now = now.Add(time.Second); return now })
	call := func(tool string, change bool) {
		t.Helper()
		if _, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			m := meta(tool)
			if len(tool)%2 == 0 {
				m.Trailers = append(m.Trailers, gitstate.Trailer{Key: gitstate.TrailerAuth, Value: "none"})
			}
			tx.SetMeta(m)
			if change {
				return tx.Put("x/"+tool+".json", rec{N: 1})
			}
			var r rec
			return tx.Get("config/version.json", &r)
		}); err != nil {
			t.Fatal(err)
		}
	}
	calls := func(prefix string, n int) {
		for i := 0; i < n; i++ {
			call(fmt.Sprintf("%s%d", prefix, i), i%3 == 0)
		}
	}
	type shown struct {
		Commit, FoldedIn, Auth string
		Changed, CutOff        bool
	}
	walk := func(events func(context.Context, []string, func(gitstate.Event) bool) error, limit int) []shown {
		t.Helper()
		refs, err := s.ReadsRefs()
		if err != nil {
			t.Fatal(err)
		}
		var out []shown
		err = events(ctx, append([]string{gitstate.RefState}, refs...), func(ev gitstate.Event) bool {
			out = append(out, shown{ev.Commit, ev.FoldedIn, ev.Get(gitstate.TrailerAuth), ev.Changed, ev.CutOff})
			return len(out) < limit
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	file := filepath.Join(dir, ".git", "codex", "reduced", "test.commits")
	// same compares a kept walk of another store with EventsOf, and says
	// whether the walk replaced the file
	same := func(limit int) (replaced bool) {
		t.Helper()
		before, _ := os.Stat(file)
		other, err := gitstate.Open(dir, gitstate.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		kept := other.KeepCommits("test")
		got := walk(kept.EventsOf, limit)
		kept.Save()
		want := walk(s.EventsOf, limit)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("a kept walk (limit %d) shows\n%v\nEventsOf\n%v", limit, got, want)
		}
		after, err := os.Stat(file)
		if err != nil {
			t.Fatalf("no kept file after a walk: %v", err)
		}
		return before == nil || !os.SameFile(before, after)
	}
	calls("a", 30)
	if !same(1000) {
		t.Fatal("the first walk left no file of its own")
	}
	if same(1000) {
		t.Error("a walk of the same history replaced the file")
	}
	if same(10) {
		t.Error("a shorter walk of kept commits replaced the file")
	}
	// new calls: the window moves on, its older part from the file
	calls("b", 7)
	if !same(20) {
		t.Error("a walk that read new commits left the file as it was")
	}
	if same(20) {
		t.Error("a walk of the same window replaced the file")
	}
	if !same(1000) {
		t.Error("a longer walk than the last kept left the file as it was")
	}
	// the reads of a day folded into one commit, and calls after it
	now = now.AddDate(0, 0, 2)
	calls("c", 5)
	folded, err := s.FoldReads(ctx, now.AddDate(0, 0, -1), now)
	if err != nil || len(folded) != 1 {
		t.Fatalf("FoldReads = %v, %v", folded, err)
	}
	foldedIn := 0
	for _, ev := range walk(s.EventsOf, 1000) {
		if ev.FoldedIn != "" {
			foldedIn++
		}
	}
	if foldedIn == 0 {
		t.Fatal("no event of the walk is a folded read")
	}
	same(1000)
	same(15)
	same(1000)
	// a file whose entries are not their commits' is done without
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i := 60; i < len(data); i += 97 {
		data[i] ^= 0x20
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if !same(1000) {
		t.Error("a walk beside a damaged file left it as it was")
	}
	if err := os.WriteFile(file, []byte("not kept commits"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !same(1000) {
		t.Error("a walk beside a file that is not one left it as it was")
	}
}

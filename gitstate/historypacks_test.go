package gitstate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestRepacksOfReadsLeaveHistoryPacks: the background repacks that reads
// start roll up the packs that hold reads only (one commit each, and what
// such repacks made of them) and leave every other pack where it is, with
// git's --keep-pack (git walks the whole history from the commits of the
// packs it rolls up): the packs of writes, and a pack git made itself,
// until there are HistoryBatch packs of writes; the repack started then
// rolls up everything. Nothing is kept from git for good: no .keep is
// left, and every record and read is there.
func TestRepacksOfReadsLeaveHistoryPacks(t *testing.T) {
	ctx := context.Background()
	s, dir := openReadsLocal(t, nil)
	common := commonDir(t, dir)
	pack := filepath.Join(common, "objects", "pack")
	read := func() {
		t.Helper()
		if _, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			var r rec
			tx.SetMeta(meta("look"))
			return tx.Get("config/version.json", &r)
		}); err != nil {
			t.Fatal(err)
		}
	}
	listed := func(file string) []string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(common, "codex", file))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return strings.Fields(string(b))
	}
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(pack, name+".pack"))
		return err == nil
	}
	packs := func() map[string]bool {
		t.Helper()
		m := map[string]bool{}
		idx, _ := filepath.Glob(filepath.Join(pack, "pack-*.idx"))
		for _, f := range idx {
			m[strings.TrimSuffix(filepath.Base(f), ".idx")] = true
		}
		return m
	}

	// a pack git made: a person's commit on a branch, packed by git
	gitstatetest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "a person's")
	before := packs()
	gitstatetest.Git(t, dir, "repack", "-d", "-q")
	var gits string
	for name := range packs() {
		if !before[name] {
			gits = name
		}
	}
	if gits == "" {
		t.Fatal("git repack -d made no pack of the loose commit")
	}

	const writes = 3
	for i := range writes {
		if _, err := putOne(s, fmt.Sprintf("r/%d.json", i)); err != nil {
			t.Fatal(err)
		}
	}
	held := listed(gitstate.HistoryPacksFile)
	if len(held) != writes+1 { // and init's
		t.Fatalf("history packs listed after init and %d writes: %v", writes, held)
	}
	reads := 0
	for range 3 * gitstate.RepackAt {
		read()
		reads++
	}
	waitForBackground(t, dir)
	if _, n, _ := objectFiles(t, dir); n >= gitstate.RepackAt {
		t.Fatalf("after %d reads: %d packs, want the reads rolled up under %d", reads, n, gitstate.RepackAt)
	}
	for _, name := range append(held, gits) {
		if !exists(name) {
			t.Errorf("a repack of reads rolled up %s, a pack of more than reads", name)
		}
	}
	// what the repacks of reads made is listed as reads, so that the
	// next one rolls it up too
	rolled := 0
	for _, name := range listed(gitstate.ReadPacksFile) {
		if exists(name) && countObjects(t, filepath.Join(pack, name+".idx")) > 1 {
			rolled++
		}
	}
	if rolled == 0 {
		t.Errorf("no pack of rolled-up reads listed in %s: %v", gitstate.ReadPacksFile, listed(gitstate.ReadPacksFile))
	}

	// enough writes to reach the batch: the next repack rolls them all up
	for i := writes; i < gitstate.HistoryBatch+2; i++ {
		if _, err := putOne(s, fmt.Sprintf("r/%d.json", i)); err != nil {
			t.Fatal(err)
		}
	}
	for range gitstate.RepackAt {
		read()
		reads++
	}
	waitForBackground(t, dir)
	for _, name := range append(held, gits) {
		if exists(name) {
			t.Errorf("%s is still there after %d writes: want it rolled up", name, gitstate.HistoryBatch+2)
		}
	}
	if n := len(listed(gitstate.HistoryPacksFile)); n >= gitstate.HistoryBatch {
		t.Errorf("%d history packs listed after the repack that rolled them up", n)
	}
	if keeps, _ := filepath.Glob(filepath.Join(pack, "*.keep")); len(keeps) != 0 {
		t.Errorf(".keep files left behind: %v", keeps)
	}
	machine, err := s.Machine()
	if err != nil {
		t.Fatal(err)
	}
	if got := gitstatetest.Git(t, dir, "rev-list", "--count", "--glob="+strings.TrimPrefix(gitstate.ReadsPrefix, "refs/")+machine+"/*"); got != fmt.Sprint(reads) {
		t.Errorf("%s reads in the reads refs, want %d", got, reads)
	}
	assertHealthy(t, dir, gitstate.HistoryBatch+2+1)
}

// countObjects reads a pack index's object count (the last entry of its
// fan-out table).
func countObjects(t *testing.T, idx string) int {
	t.Helper()
	b, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	o := 8 + 255*4
	return int(b[o])<<24 | int(b[o+1])<<16 | int(b[o+2])<<8 | int(b[o+3])
}

// TestMaintenanceKeepsACommitGraph: the store's periodic `git maintenance
// run --auto` writes the commit-graph git's gc would write (the store's
// repacks keep gc --auto from running, and without one every walk of the
// history reads each commit from its pack), under git's own switch
// (maintenance.commit-graph.auto=0: never) and not where the user chose
// git maintenance's tasks (their tasks run, as git would run them).
func TestMaintenanceKeepsACommitGraph(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config []string
		want   bool
	}{
		{"default", nil, true},
		{"commit-graph.auto=0", []string{"maintenance.commit-graph.auto", "0"}, false},
		{"user's tasks", []string{"maintenance.gc.enabled", "true"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := gitstatetest.NewRepo(t)
			// a burst of writes can leave more packs than git's gc
			// --auto allows (50) while the store's repack runs, and
			// git's gc writes a commit-graph of its own
			gitstatetest.Git(t, dir, "config", "gc.autoPackLimit", "0")
			if tc.config != nil {
				gitstatetest.Git(t, dir, append([]string{"config"}, tc.config...)...)
			}
			s := openInitIn(t, dir, gitstate.Options{PackEvery: 16})
			for i := range 150 {
				if _, err := putOne(s, fmt.Sprintf("r/%d.json", i)); err != nil {
					t.Fatal(err)
				}
			}
			waitForBackground(t, dir)
			info := filepath.Join(commonDir(t, dir), "objects", "info")
			_, e1 := os.Stat(filepath.Join(info, "commit-graph"))
			_, e2 := os.Stat(filepath.Join(info, "commit-graphs", "commit-graph-chain"))
			if got := e1 == nil || e2 == nil; got != tc.want {
				t.Fatalf("a commit-graph after 150 writes: %v, want %v", got, tc.want)
			}
			if tc.want {
				if out, err := gitstatetest.GitErr(dir, "commit-graph", "verify"); err != nil {
					t.Fatalf("git commit-graph verify: %v\n%s", err, out)
				}
			}
		})
	}
}

// TestCommitGraphWaitsForTheMaintenanceLock: a round of maintenance due
// while git maintenance's lock is taken (the store's repack holds it for
// its whole run, a person's `git maintenance run` too) waits for it and
// then writes the commit-graph, instead of git maintenance giving up
// without a word and the round being lost (under load, three rounds in a
// row met a repack and TestMaintenanceKeepsACommitGraph failed).
func TestCommitGraphWaitsForTheMaintenanceLock(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	gitstatetest.Git(t, dir, "config", "gc.autoPackLimit", "0")
	objects := filepath.Join(commonDir(t, dir), "objects")
	lock := filepath.Join(objects, "maintenance.lock")
	if err := os.WriteFile(lock, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	s := openInitIn(t, dir, gitstate.Options{PackEvery: 16})
	for i := range 120 {
		if _, err := putOne(s, fmt.Sprintf("r/%d.json", i)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond)
	info := filepath.Join(objects, "info")
	if _, err := os.Stat(filepath.Join(info, "commit-graphs")); err == nil {
		t.Fatal("a commit-graph written while git maintenance's lock was taken")
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	waitForBackground(t, dir)
	_, e1 := os.Stat(filepath.Join(info, "commit-graph"))
	_, e2 := os.Stat(filepath.Join(info, "commit-graphs", "commit-graph-chain"))
	if e1 != nil && e2 != nil {
		t.Fatal("no commit-graph once the lock was released: the rounds due meanwhile were lost")
	}
	if out, err := gitstatetest.GitErr(dir, "commit-graph", "verify"); err != nil {
		t.Fatalf("git commit-graph verify: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(commonDir(t, dir), "gc.pid")); err == nil {
		t.Error("gc.pid left behind")
	}
}

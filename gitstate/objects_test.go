package gitstate_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// objectFiles counts the loose objects and the packs (by their .idx) in a
// repository's object directory.
func objectFiles(t *testing.T, dir string) (loose, packs, smallPacks int) {
	t.Helper()
	objects := filepath.Join(commonDir(t, dir), "objects")
	fanout, _ := filepath.Glob(filepath.Join(objects, "[0-9a-f][0-9a-f]", "*"))
	idx, _ := filepath.Glob(filepath.Join(objects, "pack", "*.idx"))
	for _, f := range idx {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := int(b[8+255*4])<<24 | int(b[8+255*4+1])<<16 | int(b[8+255*4+2])<<8 | int(b[8+255*4+3]); n < 1000 {
			smallPacks++
		}
	}
	return len(fanout), len(idx), smallPacks
}

// TestTransactionWritesOnePack: a transaction's objects (blob, trees,
// commit) go into one new pack with its index, no loose object, and git
// reads them: cat-file, fsck --full.
func TestTransactionWritesOnePack(t *testing.T) {
	s, dir := openInit(t)
	loose0, packs0, _ := objectFiles(t, dir)
	c, err := putOne(s, "a/b/c.json")
	if err != nil {
		t.Fatal(err)
	}
	loose, packs, _ := objectFiles(t, dir)
	if loose != loose0 || packs != packs0+1 {
		t.Fatalf("after one transaction: %d loose objects (was %d), %d packs (was %d); want no new loose object and one new pack", loose, loose0, packs, packs0)
	}
	tmp, _ := filepath.Glob(filepath.Join(commonDir(t, dir), "objects", "pack", "tmp_*"))
	if len(tmp) != 0 {
		t.Fatalf("temporary files left: %v", tmp)
	}
	if got, err := gitCatBlob(dir, c.Hash+":a/b/c.json"); err != nil || string(got) != "{\n  \"n\": 1\n}\n" {
		t.Fatalf("git cat-file of the new record = %q, %v", got, err)
	}
	// the pack holds exactly the objects git expects: the new blob, the
	// trees a/b, a and the root, and the commit.
	pack, _ := filepath.Glob(filepath.Join(commonDir(t, dir), "objects", "pack", "*.idx"))
	var newest string
	var newestTime int64
	for _, p := range pack {
		fi, _ := os.Stat(p)
		if fi.ModTime().UnixNano() >= newestTime {
			newest, newestTime = p, fi.ModTime().UnixNano()
		}
	}
	verify := gitstatetest.Git(t, dir, "verify-pack", "-v", strings.TrimSuffix(newest, ".idx")+".pack")
	if !strings.Contains(verify, "non delta: 5 objects") {
		t.Fatalf("git verify-pack of the transaction's pack:\n%s", verify)
	}
	assertHealthy(t, dir, 2)
}

// TestGitRepacksSmallPacks: the store deletes no pack itself; once the
// transactions' packs pile up, git's geometric repack, started in the
// background, rolls them up, so the count stays bounded while every record
// stays readable, by a fresh Store and by git, no .keep is left behind, and
// fsck finds nothing wrong.
func TestGitRepacksSmallPacks(t *testing.T) {
	s, dir := openInit(t)
	const n = 150
	for i := 0; i < n; i++ {
		if _, err := putOne(s, fmt.Sprintf("r/%d.json", i)); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
	waitForBackground(t, dir)
	if _, packs, _ := objectFiles(t, dir); packs > gitstate.RepackAt {
		t.Fatalf("after %d transactions: %d packs, want git's repack to have kept them under %d", n, packs, gitstate.RepackAt)
	}
	if keeps, _ := filepath.Glob(filepath.Join(commonDir(t, dir), "objects", "pack", "*.keep")); len(keeps) != 0 {
		t.Fatalf(".keep files left behind: %v", keeps)
	}
	if got := len(tipRecords(t, dir)); got != n+1 {
		t.Fatalf("a fresh Store reads %d records, want %d", got, n+1)
	}
	if got := len(gitTreePaths(t, dir, gitstate.RefState)); got != n+1 {
		t.Fatalf("git lists %d records, want %d", got, n+1)
	}
	assertHealthy(t, dir, n+1)
}

// TestRepackRunsAgainAfterWritesDuringIt: the packs written while the
// background repack runs (each such writer finds it running and starts
// none) are rolled up by that same job once git is done, even when no
// write follows. A wrapper in front of the real git holds the first repack
// open, after git has listed and rolled up its packs, until the test has
// written 40 more; before the fix they stayed (TestGitRepacksSmallPacks
// once ended with 52 packs under CI load).
func TestRepackRunsAgainAfterWritesDuringIt(t *testing.T) {
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	gate := filepath.Join(t.TempDir(), "gate")
	wrapper := `#!/bin/sh
"$P99_REAL_GIT" "$@"; rc=$?
case " $* " in *" repack "*)
	: >"$P99_GATE.held"
	i=0
	while [ ! -e "$P99_GATE.open" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
esac
exit $rc
`
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("P99_REAL_GIT", realGit)
	t.Setenv("P99_GATE", gate)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	s, dir := openInit(t)
	i := 0
	put := func() {
		t.Helper()
		if _, err := putOne(s, fmt.Sprintf("r/%d.json", i)); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
		i++
	}
	for i < gitstate.RepackAt {
		put()
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(gate + ".held"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no background repack started past RepackAt packs")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for n := i + 40; i < n; {
		put()
	}
	_, during, _ := objectFiles(t, dir)
	if err := os.WriteFile(gate+".open", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitForBackground(t, dir)
	if _, packs, _ := objectFiles(t, dir); packs > gitstate.RepackAt {
		t.Fatalf("%d packs once the repack ended (%d while it was held), want them rolled up without another write", packs, during)
	}
	assertHealthy(t, dir, i+1)
}

// waitForBackground waits until no repack or maintenance the store started
// is running.
func waitForBackground(t testing.TB, dir string) {
	t.Helper()
	gitstatetest.WaitForMaintenance(t, dir)
}

// TestReadsDeltifiedPacks: after git repacks everything with deltas, as
// offsets (git's default) or as base hashes (packs from older clients and
// some transports), every record and every commit of the history reads
// back the same.
func TestReadsDeltifiedPacks(t *testing.T) {
	ctx := context.Background()
	for _, ofs := range []bool{true, false} {
		t.Run("ofs-delta="+strconv.FormatBool(ofs), func(t *testing.T) {
			s, dir := openInit(t)
			for i := 0; i < 40; i++ {
				// the same record rewritten: each version is a delta of another
				if _, err := s.Update(ctx, func(tx *gitstate.Tx) error {
					tx.SetMeta(meta("put"))
					return tx.PutRaw("big/r.json", []byte(strings.Repeat(fmt.Sprintf("line %d\n", i%3), 200)+strconv.Itoa(i)))
				}); err != nil {
					t.Fatal(err)
				}
			}
			want := tipRecords(t, dir)
			waitForBackground(t, dir)
			gitstatetest.Git(t, dir, "-c", "pack.useDeltaBaseOffset="+strconv.FormatBool(ofs), "repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=50")
			packs, _ := filepath.Glob(filepath.Join(commonDir(t, dir), "objects", "pack", "*.pack"))
			if len(packs) != 1 {
				t.Fatalf("%d packs after repack -a, want 1", len(packs))
			}
			verify := gitstatetest.Git(t, dir, "verify-pack", "-v", packs[0])
			if !strings.Contains(verify, "chain length = ") {
				t.Fatalf("git repack made no deltas:\n%s", verify)
			}
			got := tipRecords(t, dir)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("after repack the tip reads\n%q\nwant\n%q", got, want)
			}
			fresh, err := gitstate.Open(dir, gitstate.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer fresh.Close()
			n := 0
			err = fresh.Events(ctx, "", func(e gitstate.Event) bool {
				n++
				b, gerr := gitCatBlob(dir, e.Commit+":big/r.json")
				var mine []byte
				verr := fresh.ViewAt(ctx, e.Commit, func(sn *gitstate.Snapshot) error {
					var err error
					mine, err = sn.Read("big/r.json")
					return err
				})
				if gerr == nil && (verr != nil || string(mine) != string(b)) {
					t.Errorf("%s: read %q, %v; git reads %q", e.Commit, mine, verr, b)
				}
				return true
			})
			if err != nil || n != 41 {
				t.Fatalf("history: %d events, %v; want 41", n, err)
			}
			// more transactions build on the deltified records
			for i := 0; i < 40; i++ {
				if _, err := putOne(fresh, fmt.Sprintf("more/%d.json", i)); err != nil {
					t.Fatal(err)
				}
			}
			waitForBackground(t, dir)
			got = tipRecords(t, dir)
			if string(got["big/r.json"]) != string(want["big/r.json"]) || len(got) != len(want)+40 {
				t.Fatalf("after 40 more transactions the tip reads %d records, big/r.json %q", len(got), got["big/r.json"])
			}
			assertHealthy(t, dir, 81)
		})
	}
}

// TestPackWriteKilledHalfwayLeavesGitHappy: what a writer killed while
// writing its pack leaves (a temporary pack, a pack whose index was never
// renamed into place) is ignored by readers and by git fsck, and the next
// transaction commits.
func TestPackWriteKilledHalfwayLeavesGitHappy(t *testing.T) {
	s, dir := openInit(t)
	packDir := filepath.Join(commonDir(t, dir), "objects", "pack")
	// a half-written temporary pack and a complete pack without an index
	if err := os.WriteFile(filepath.Join(packDir, "tmp_pack_0123456789abcdef"), []byte("PACK\x00\x00"), 0o444); err != nil {
		t.Fatal(err)
	}
	packs, _ := filepath.Glob(filepath.Join(packDir, "*.pack"))
	if len(packs) == 0 {
		t.Fatal("no pack after init")
	}
	b, err := os.ReadFile(packs[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(packDir, "pack-"+strings.Repeat("ab", 20)+".pack"), b, 0o444); err != nil {
		t.Fatal(err)
	}
	if _, err := putOne(s, "after/crash.json"); err != nil {
		t.Fatalf("transaction after a killed pack write: %v", err)
	}
	if got := tipRecords(t, dir); len(got) != 2 {
		t.Fatalf("records after the crash: %v", got)
	}
	assertHealthy(t, dir, 2)
}

// TestReadsThroughAlternates: a repository that borrows objects from
// another (git clone --shared) reads the state objects it has only there.
func TestReadsThroughAlternates(t *testing.T) {
	s, dir := openInit(t)
	if _, err := putOne(s, "shared/r.json"); err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	gitstatetest.Git(t, dir, "clone", "-q", "--shared", dir, clone)
	tip := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)
	gitstatetest.Git(t, clone, "update-ref", gitstate.RefState, tip)
	loose, packs, _ := objectFiles(t, clone)
	if loose != 0 || packs != 0 {
		t.Fatalf("the clone has %d loose objects and %d packs of its own; want none", loose, packs)
	}
	if got := tipRecords(t, clone); string(got["shared/r.json"]) != "{\n  \"n\": 1\n}\n" {
		t.Fatalf("the clone reads %q", got)
	}
}

// TestNoRepackWhenGitsMaintenanceIsOff: gc.auto=0 turns git's automatic
// housekeeping off, and the store's with it; extensions.preciousObjects
// forbids deleting packs, so no repack runs there either. Every pack the
// transactions wrote is still there.
func TestNoRepackWhenGitsMaintenanceIsOff(t *testing.T) {
	for _, kv := range [][2]string{{"gc.auto", "0"}, {"maintenance.auto", "false"}, {"extensions.preciousObjects", "true"}} {
		t.Run(kv[0], func(t *testing.T) {
			dir := newStateRepo(t)
			gitstatetest.Git(t, dir, "config", kv[0], kv[1])
			s, err := gitstate.Open(dir, gitstate.Options{PackEvery: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, before, _ := objectFiles(t, dir)
			const n = gitstate.RepackAt + 8
			for i := 0; i < n; i++ {
				if _, err := putOne(s, fmt.Sprintf("r/%d.json", i)); err != nil {
					t.Fatal(err)
				}
			}
			waitForBackground(t, dir)
			if _, packs, _ := objectFiles(t, dir); packs != before+n {
				t.Fatalf("%d packs, want %d: a repack ran although %s=%s", packs, before+n, kv[0], kv[1])
			}
			if got := len(tipRecords(t, dir)); got != n+1 {
				t.Fatalf("%d records, want %d", got, n+1)
			}
		})
	}
}

// TestRepackWaitsForGitGC: while git gc holds its lock (gc.pid naming a
// live process on this host) the store starts no repack, so the two never
// repack at once; once gc is done the next writer's repack runs, under
// the same lock, and leaves neither gc.pid nor gc.pid.lock behind.
func TestRepackWaitsForGitGC(t *testing.T) {
	s, dir := openInit(t)
	host, _ := os.Hostname()
	common := commonDir(t, dir)
	pidFile := filepath.Join(common, "gc.pid")
	held := fmt.Sprintf("%d %s", os.Getpid(), host)
	if err := os.WriteFile(pidFile, []byte(held), 0o644); err != nil {
		t.Fatal(err)
	}
	n := gitstate.RepackAt + 4
	for i := 0; i < n; i++ {
		if _, err := putOne(s, fmt.Sprintf("r/%d.json", i)); err != nil {
			t.Fatal(err)
		}
	}
	waitForRepackLock(t, common)
	if _, packs, _ := objectFiles(t, dir); packs != n+1 {
		t.Fatalf("%d packs while gc runs, want %d (none repacked)", packs, n+1)
	}
	if b, _ := os.ReadFile(pidFile); string(b) != held {
		t.Fatalf("gc.pid = %q, want gc's own %q", b, held)
	}
	if err := os.Remove(pidFile); err != nil {
		t.Fatal(err)
	}
	if _, err := putOne(s, "r/last.json"); err != nil {
		t.Fatal(err)
	}
	waitForBackground(t, dir)
	if _, packs, _ := objectFiles(t, dir); packs > gitstate.RepackAt/2 {
		t.Fatalf("%d packs after gc ended and one more transaction, want them repacked", packs)
	}
	for _, f := range []string{"gc.pid", "gc.pid.lock", filepath.Join("objects", "maintenance.lock")} {
		if _, err := os.Stat(filepath.Join(common, f)); err == nil {
			t.Errorf("%s left behind by the repack", f)
		}
	}
	assertHealthy(t, dir, n+2)
}

// waitForRepackLock waits until the store's background repack is not
// running (its flock on codex/repack.lock is free), whatever gc.pid says.
func waitForRepackLock(t *testing.T, common string) {
	t.Helper()
	f, err := os.Open(filepath.Join(common, "codex", "repack.lock"))
	if err != nil {
		return
	}
	defer f.Close()
	deadline := time.Now().Add(time.Minute)
	for syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the background repack still runs after a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// git's background maintenance does not carry the calling agent's identity
// or token.
func TestMaintenanceEnvDropsTheAgents(t *testing.T) {
	got := gitstate.MaintenanceEnv([]string{"PATH=/bin", "CODEX_INSTANCE=w1", "CODEX_TOKEN=ctok_x", "GIT_DIR=/r/.git", "HOME=/h"})
	if want := []string{"PATH=/bin", "GIT_DIR=/r/.git", "HOME=/h"}; !slices.Equal(got, want) {
		t.Fatalf("maintenanceEnv = %v, want %v", got, want)
	}
}

// TestRepackWaitsForGitMaintenance: a repack a write starts while `git
// maintenance` holds its lock waits for it rather than giving up, so the
// packs of a burst's last writes are rolled up once maintenance is done
// (in CI, a maintenance run --auto started by the same write left 35).
func TestRepackWaitsForGitMaintenance(t *testing.T) {
	s, dir := openInit(t)
	lock := filepath.Join(commonDir(t, dir), "objects", "maintenance.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	const n = 40
	for i := 0; i < n; i++ {
		if _, err := putOne(s, fmt.Sprintf("r/%d.json", i)); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
	time.Sleep(500 * time.Millisecond) // the repack started and found the lock taken
	if _, packs, _ := objectFiles(t, dir); packs < gitstate.RepackAt {
		t.Fatalf("%d packs while git maintenance held its lock; want them left alone", packs)
	}
	os.Remove(lock)
	waitForBackground(t, dir)
	if _, packs, _ := objectFiles(t, dir); packs >= gitstate.RepackAt {
		t.Fatalf("%d packs after git maintenance ended; want the waiting repack to have rolled them up under %d", packs, gitstate.RepackAt)
	}
}

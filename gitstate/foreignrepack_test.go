package gitstate_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestRepackWaitsForAForeignRepack: a `git repack` run by hand takes no
// lock, and while it runs its new pack lies in the pack directory as a
// temporary pack (".tmp-<pid>-pack-<sum>"), which git reads as any other.
// A geometric repack started then leaves out what that pack holds and
// deletes the packs it rolled up; when the hand-run repack then fails (as
// `git repack --cruft -d` does when ours deleted a pack it listed), git
// removes its temporary files and those objects are gone. Here a live
// process's temporary pack holds every object of the state and thousands
// of others (so a geometric repack leaves it alone, as git's would a
// repack's whole pack); the store's repack must not run while it is
// there, and once it is removed (its repack failed), it runs and nothing
// is lost. Before the fix the store's repack rolled the state's packs up
// at once, leaving the objects of the first writes only in the temporary
// pack: git fsck found them missing once it was removed.
func TestRepackWaitsForAForeignRepack(t *testing.T) {
	s, dir := openInit(t)
	n := 0
	put := func(count int) {
		t.Helper()
		for i := 0; i < count; i++ {
			n++
			if _, err := putOne(s, fmt.Sprintf("r/%d.json", n)); err != nil {
				t.Fatalf("put %d: %v", n, err)
			}
		}
	}
	put(10) // packs of their own: no repack yet
	waitForBackground(t, dir)

	// the hand-run repack: a live process, and its temporary pack of
	// every object there and 3,000 more
	sleeper := exec.Command("sleep", "300")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	pack := filepath.Join(commonDir(t, dir), "objects", "pack")
	tmp := filepath.Join(pack, ".tmp-"+strconv.Itoa(sleeper.Process.Pid)+"-pack")
	scratch := filepath.Join(t.TempDir(), "scratch.git")
	gitstatetest.Git(t, dir, "clone", "-q", "--mirror", "--no-local", dir, scratch)
	var blobs strings.Builder
	for i := 0; i < 3000; i++ {
		data := fmt.Sprintf("filler %d\n", i)
		fmt.Fprintf(&blobs, "blob\ndata %d\n%s\n", len(data), data)
	}
	fastImport := exec.Command("git", "-C", scratch, "fast-import", "--quiet")
	fastImport.Stdin = strings.NewReader(blobs.String())
	if out, err := fastImport.CombinedOutput(); err != nil {
		t.Fatalf("git fast-import: %v\n%s", err, out)
	}
	all := gitstatetest.Git(t, scratch, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
	packObjects := exec.Command("git", "-C", scratch, "pack-objects", "-q", tmp)
	packObjects.Stdin = strings.NewReader(all + "\n")
	if out, err := packObjects.CombinedOutput(); err != nil {
		t.Fatalf("git pack-objects: %v\n%s", err, out)
	}
	temporary, _ := filepath.Glob(tmp + "-*")
	if len(temporary) < 2 {
		t.Fatalf("the temporary pack's files: %v", temporary)
	}

	// enough writes for the store to start its repack
	_, before, _ := objectFiles(t, dir)
	put(gitstate.RepackAt + 8)
	time.Sleep(time.Second)
	if _, packs, _ := objectFiles(t, dir); packs < before+gitstate.RepackAt+8 {
		t.Errorf("%d packs after %d writes beside a repack's temporary pack, %d before: the store repacked beside it", packs, gitstate.RepackAt+8, before)
	}

	// the hand-run repack fails: git removes its temporary files
	sleeper.Process.Kill()
	sleeper.Wait()
	for _, f := range temporary {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	waitForBackground(t, dir)
	if out, err := gitstatetest.GitErr(dir, "fsck", "--full", "--strict", "--no-dangling"); err != nil {
		t.Fatalf("git fsck once the temporary pack was removed: %v\n%s", err, out)
	}
	if _, packs, _ := objectFiles(t, dir); packs > gitstate.RepackAt {
		t.Errorf("%d packs once the foreign repack ended, want the store's repack, which waited, to have run", packs)
	}
	assertHealthy(t, dir, n+1)
}

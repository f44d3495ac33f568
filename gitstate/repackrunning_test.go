package gitstate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
)

// TestNoRescanWhileRepackRuns: a write that finds repackAt packs or more
// reads the pack directory again (to start git's repack only if they are
// still there) unless the repack job is running, when it would start
// nothing anyway: while a big state's repack runs (seconds) that was every
// write's ~0.27 ms (issue 27). Here the test holds the job's lock: writes
// past the threshold do not rescan; once it is let go, the next write
// rescans and starts the repack, which rolls the packs up.
func TestNoRescanWhileRepackRuns(t *testing.T) {
	s, dir := openInit(t)
	lock := filepath.Join(commonDir(t, dir), "codex", "repack.lock")
	f, err := os.OpenFile(lock, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	rescans := 0
	s.SetPhaseHook(func(ph string) {
		if ph == "maintain-rescan" {
			rescans++
		}
	})
	for i := 0; i < gitstate.RepackAt+8; i++ {
		if _, err := putOne(s, fmt.Sprintf("r/%d.json", i)); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
	if _, packs, _ := objectFiles(t, dir); packs < gitstate.RepackAt {
		t.Fatalf("%d packs; the test needs %d or more", packs, gitstate.RepackAt)
	}
	if rescans != 0 {
		t.Fatalf("%d writes read the pack directory again while the repack job ran", rescans)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if _, err := putOne(s, "r/after.json"); err != nil {
		t.Fatal(err)
	}
	if rescans != 1 {
		t.Fatalf("the write after the job ended rescanned %d times, want 1", rescans)
	}
	waitForBackground(t, dir)
	if _, packs, _ := objectFiles(t, dir); packs >= gitstate.RepackAt {
		t.Fatalf("%d packs after the repack that write started", packs)
	}
}

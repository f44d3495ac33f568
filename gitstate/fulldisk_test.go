package gitstate_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

const envFullDisk = "GITSTATE_TEST_FULL_DISK" // repository the child writes to with a file size limit

// TestFullDiskLeavesNoTempObjects is issue 16 item 12: a write that fails
// for want of space left tmp_obj_* files in the object store. The child
// process writes under a file size limit (RLIMIT_FSIZE: writes past it fail
// with EFBIG, as they would with ENOSPC on a full disk); the transaction
// fails, the ref stays, and no temporary object is left behind.
func TestFullDiskLeavesNoTempObjects(t *testing.T) {
	if dir := os.Getenv(envFullDisk); dir != "" {
		fullDiskChild(t, dir)
		return
	}
	dir := newStateRepo(t)
	tip := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)
	cmd := exec.Command(os.Args[0], "-test.run=^TestFullDiskLeavesNoTempObjects$", "-test.v")
	cmd.Env = append(os.Environ(), envFullDisk+"="+dir)
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "write failed:") {
		t.Fatalf("the child's write did not fail:\n%s", out)
	}
	var left []string
	filepath.WalkDir(filepath.Join(dir, ".git", "objects"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "tmp_") {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("temporary objects left behind: %v", left)
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState); got != tip {
		t.Errorf("the ref moved")
	}
	if out, err := gitstatetest.GitErr(dir, "fsck", "--strict", "--no-dangling"); err != nil {
		t.Errorf("fsck: %v\n%s", err, out)
	}
}

func fullDiskChild(t *testing.T, dir string) {
	s, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	noise := make([]byte, 32<<10)
	rand.Read(noise)
	// the writer lock's file is opened before the limit applies
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 1024, Max: ^uint64(0)}); err != nil {
		t.Skip("cannot limit file sizes:", err)
	}
	_, err = s.Update(context.Background(), func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("big"))
		return tx.Put("big/noise.json", rec{Text: hex.EncodeToString(noise)})
	})
	fmt.Printf("write failed: %v\n", err)
	if err == nil {
		t.Fatal("the write succeeded past the limit")
	}
}

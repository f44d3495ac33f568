package gitstate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// Every transaction writes its objects as one small pack (see writePack).
// Small packs are folded by `git repack --geometric=2 -d` once there are
// smallPackLimit of them: it rolls the small packs (and any loose objects)
// into one, keeping the packs' sizes a geometric progression, so a lookup
// has few indexes to search and the work per transaction stays small and
// constant on average. Big packs (a clone's, gc's) are left alone, and
// git's own `gc --auto`, which would repack everything once there are
// gc.autoPackLimit (50) packs, never sees that many.
const (
	smallPackLimit   = 16
	smallPackObjects = 1000 // a pack with fewer objects counts as small
)

// consolidate folds the small packs when there are enough of them. It runs
// after the writer lock is released, so writers never wait for it; at most
// one runs per repository at a time (a non-blocking flock on
// "codex/repack.lock"), and a failure loses nothing: the packs stay as they
// were.
func (s *Store) consolidate(ctx context.Context) {
	s.objMu.Lock()
	small := 0
	for _, p := range s.objects.packs {
		if p.count < smallPackObjects {
			small++
		}
	}
	s.objMu.Unlock()
	if small < smallPackLimit {
		return
	}
	f, err := os.OpenFile(filepath.Join(s.commonDir, "codex", "repack.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return // another process is folding them
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	cmd := exec.CommandContext(ctx, "git", "--git-dir", s.commonDir, "repack", "-d", "-q", "--geometric=2", "--no-write-bitmap-index")
	_ = cmd.Run()
	s.objMu.Lock()
	s.objects.scanned = false
	s.objMu.Unlock()
}

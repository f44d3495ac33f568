package gitstate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
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
// after the writer lock is released, so writers never wait for it, and
// takes git gc's own lock ("gc.pid"), so it never runs beside a gc or
// another consolidation (two repacks at once make one fail). A failure loses
// nothing: the packs stay as they were.
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
	unlock, err := lockForGC(s.commonDir)
	if err != nil {
		return // gc or another consolidation is running
	}
	defer unlock()
	cmd := exec.CommandContext(ctx, "git", "--git-dir", s.commonDir, "repack", "-d", "-q", "--geometric=2", "--no-write-bitmap-index")
	_ = cmd.Run()
	s.objMu.Lock()
	s.objects.scanned = false
	s.objMu.Unlock()
}

// lockForGC takes the lock `git gc` takes, with git's protocol: create
// "gc.pid.lock" exclusively, refuse if "gc.pid" names a live process on
// this host written less than 12 hours ago, else write "<pid> <host>" and
// rename it to "gc.pid". unlock removes "gc.pid". A gc.pid left by a killed
// process names a dead pid, which git (and this) ignore.
func lockForGC(commonDir string) (unlock func(), err error) {
	pidPath := filepath.Join(commonDir, "gc.pid")
	lock := pidPath + ".lock"
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	if b, err := os.ReadFile(pidPath); err == nil {
		fi, serr := os.Stat(pidPath)
		fields := strings.Fields(string(b))
		if serr == nil && time.Since(fi.ModTime()) <= 12*time.Hour && len(fields) == 2 {
			pid, perr := strconv.Atoi(fields[0])
			if perr == nil && (fields[1] != host || processAlive(pid)) {
				f.Close()
				os.Remove(lock)
				return nil, fmt.Errorf("gitstate: gc is running as pid %d on %s", pid, fields[1])
			}
		}
	}
	_, err = fmt.Fprintf(f, "%d %s", os.Getpid(), host)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(lock, pidPath)
	}
	if err != nil {
		os.Remove(lock)
		return nil, err
	}
	return func() { os.Remove(pidPath) }, nil
}

// processAlive is git's test: kill(pid, 0) succeeds or fails with EPERM.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

package gitstate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
	"github.com/go-git/go-git/v5/plumbing"
)

// swapRef moves name from old to new with git's lock protocol: take
// "<ref>.lock" exclusively, check the current value, and rename the lock
// file, which already holds the new value, fsynced, over the ref. The git CLI
// takes the same lock, so neither side ever sees a half-written ref. old is
// the zero hash when the ref must not exist yet. The caller holds the writer
// lock.
//
// The lock file is staged first under the writer lock's directory and
// hard-linked to "<ref>.lock": the writer lock's marker names the staged
// file's inode before the link exists, so a writer killed at any point leaves
// a "<ref>.lock" the next writer can tell apart from one git holds (see
// writerLock).
func (s *Store) swapRef(name string, old, new plumbing.Hash) error {
	refPath := filepath.Join(s.commonDir, filepath.FromSlash(name))
	lockPath := refPath + ".lock"
	s.writer.recoverSwap(lockPath)
	if err := s.writer.stage(name+".lock", new.String()+"\n"); err != nil {
		return err
	}
	defer s.writer.unstage()
	s.phase("staged")
	if err := s.acquireRefLock(lockPath); err != nil {
		return err
	}
	s.phase("reflock")
	held := true
	defer func() {
		if held {
			os.Remove(lockPath)
		}
	}()
	cur, ok, err := gitrepo.ReadRef(s.commonDir, name)
	if err != nil {
		return err
	}
	if (!ok && !old.IsZero()) || (ok && cur != old) {
		return fmt.Errorf("gitstate: update %s: expected %s, found %s: %w", name, old, cur, ErrRefMoved)
	}
	if s.swapHook != nil {
		s.swapHook("locked")
	}
	if err := os.Rename(lockPath, refPath); err != nil {
		return fmt.Errorf("gitstate: rename %s: %w", lockPath, err)
	}
	held = false
	return nil
}

// acquireRefLock makes the staged lock file "<ref>.lock", waiting with
// backoff while another program (the git CLI: pack-refs, fetch, update-ref)
// holds it, for at most Options.LockTimeout.
func (s *Store) acquireRefLock(lockPath string) error {
	deadline := time.Now().Add(s.opts.LockTimeout)
	backoff := 100 * time.Microsecond
	waiting := false
	for mkdirs := 0; ; {
		err := s.writer.place(lockPath)
		if err == nil {
			return nil
		}
		switch {
		case errors.Is(err, fs.ErrExist):
			// held by git: wait.
			if !waiting && s.swapHook != nil {
				s.swapHook("wait")
			}
			waiting = true
		case errors.Is(err, fs.ErrNotExist):
			// the directory vanished (pack-refs prunes empty ref
			// dirs), or never was; made again, level by level, and
			// git's pack-refs may prune a level just made before the
			// next is (refs/codex/reads/<machine> under a gc), so a
			// level gone is made again too, as git's own
			// raceproof_create_file retries
			if mkdirs++; mkdirs > 100 {
				return fmt.Errorf("gitstate: create %s: %w", lockPath, err)
			}
			if err := s.writer.shared.mkdirAll(filepath.Dir(lockPath), s.commonDir); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("gitstate: create %s: %w", filepath.Dir(lockPath), err)
			}
			continue
		default:
			return fmt.Errorf("gitstate: create %s: %w", lockPath, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gitstate: %s is held by another program; if no git command is running, remove it: %w", lockPath, ErrLockTimeout)
		}
		time.Sleep(backoff)
		if backoff < 20*time.Millisecond {
			backoff *= 2
		}
	}
}

// writeFileRaw is gitrepo.WriteFileRaw: the writer lock stages ref lock
// files with it, as git writes them.
func writeFileRaw(name string, perm uint32, data []byte, sync bool) (ino uint64, err error) {
	return gitrepo.WriteFileRaw(name, perm, data, sync)
}

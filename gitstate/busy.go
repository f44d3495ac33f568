package gitstate

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// Work marks say that a process is doing work outside git for a record
// (making an instance's worktree and session): a kernel flock on
// "<common dir>/codex/work/<name>.lock", held while the work runs and
// dropped by the kernel when the process dies. A record left half-made
// (an instance STARTING) whose mark nobody holds was abandoned by a
// process that crashed, which is how cleanup tells it from one still in
// the making, without guessing from the clock.

// HoldWork takes the work mark of name and returns its release.
func (s *Store) HoldWork(name string) (release func(), err error) {
	path := s.workMark(name)
	shared := s.config().shared
	if err := shared.mkdirAll(filepath.Dir(path), s.commonDir); err != nil {
		return nil, fmt.Errorf("gitstate: create %s: %w", filepath.Dir(path), err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("gitstate: open work mark: %w", err)
	}
	shared.applyFd(int(f.Fd()))
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("gitstate: work mark %s is held by another process: %w", name, err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			os.Remove(path)
			f.Close()
		})
	}, nil
}

// WorkHeld reports whether a live process holds name's work mark.
func (s *Store) WorkHeld(name string) bool {
	f, err := os.OpenFile(s.workMark(name), os.O_RDWR, 0)
	if err != nil {
		return false // never taken, or released
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return true
	}
	os.Remove(f.Name()) // left by a process that died
	return false
}

func (s *Store) workMark(name string) string {
	return filepath.Join(s.commonDir, "codex", "work", name+".lock")
}

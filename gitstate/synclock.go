package gitstate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockSync makes the syncs of one repository, in any process, take turns:
// a kernel flock on "<common dir>/codex/sync.lock", held for a whole fetch,
// merge and push. Two fetches into the same remote-tracking refs at once
// make git refuse all but one ("cannot lock ref"), and two pushes of one
// state race for nothing. Local transactions never take this lock, so they
// never wait for the network; the merge itself still takes the writer lock.
// Waiting gives up when ctx ends.
func (s *Store) lockSync(ctx context.Context) (unlock func(), err error) {
	path := filepath.Join(s.commonDir, "codex", "sync.lock")
	shared := s.config().shared
	if err := shared.mkdirAll(filepath.Dir(path), s.commonDir); err != nil {
		return nil, fmt.Errorf("gitstate: create %s: %w", filepath.Dir(path), err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("gitstate: open sync lock: %w", err)
	}
	shared.applyFd(int(f.Fd()))
	wait := time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // closing drops the lock
		}
		if err != syscall.EWOULDBLOCK && err != syscall.EINTR {
			f.Close()
			return nil, fmt.Errorf("gitstate: lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("gitstate: waiting for another sync of this repository: %w", ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

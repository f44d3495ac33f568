package gitstate

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// writerLock serialises git codex writers of one repository across
// processes: a kernel flock on "<common dir>/codex/writer.lock", held for the
// whole read-modify-write of a transaction. The kernel drops it when a holder
// dies, so a killed writer never blocks the next one.
//
// The file's content is a marker: "swap" while its holder owns
// "<ref>.lock". A new holder that finds the marker knows the previous one died
// mid-swap, and that the "<ref>.lock" it left is stale.
type writerLock struct {
	path string
	f    *os.File // opened lazily, kept for the Store's life
}

func (w *writerLock) lock() error {
	if w.f == nil {
		if err := os.MkdirAll(filepath.Dir(w.path), 0o755); err != nil {
			return fmt.Errorf("gitstate: create %s: %w", filepath.Dir(w.path), err)
		}
		f, err := os.OpenFile(w.path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("gitstate: open writer lock: %w", err)
		}
		w.f = f
	}
	for {
		err := syscall.Flock(int(w.f.Fd()), syscall.LOCK_EX)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("gitstate: lock %s: %w", w.path, err)
		}
		return nil
	}
}

func (w *writerLock) unlock() {
	if w.f != nil {
		syscall.Flock(int(w.f.Fd()), syscall.LOCK_UN)
	}
}

func (w *writerLock) staleSwap() bool {
	buf := make([]byte, 4)
	n, _ := w.f.ReadAt(buf, 0)
	return string(buf[:n]) == "swap"
}

func (w *writerLock) markSwap() error {
	if _, err := w.f.WriteAt([]byte("swap"), 0); err != nil {
		return fmt.Errorf("gitstate: mark writer lock: %w", err)
	}
	return nil
}

func (w *writerLock) clearSwap() {
	w.f.Truncate(0)
}

func (w *writerLock) close() error {
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

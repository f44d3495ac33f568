package gitstate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// readRef reads a ref the way git does: the loose file first, then
// packed-refs. ok is false when the ref exists in neither. Reading the loose
// file before packed-refs is safe against a concurrent `git pack-refs`, which
// writes packed-refs before it deletes the loose file.
func readRef(commonDir, name string) (h plumbing.Hash, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(commonDir, filepath.FromSlash(name)))
	switch {
	case err == nil:
		s := strings.TrimSpace(string(b))
		if !plumbing.IsHash(s) {
			return plumbing.ZeroHash, false, fmt.Errorf("gitstate: ref %s holds %q, not an object id", name, s)
		}
		return plumbing.NewHash(s), true, nil
	case errors.Is(err, fs.ErrNotExist), isNotDir(err):
		return readPackedRef(commonDir, name)
	default:
		return plumbing.ZeroHash, false, fmt.Errorf("gitstate: read ref %s: %w", name, err)
	}
}

// isNotDir reports ENOTDIR, which a lookup returns when a path component is a
// file; for refs that simply means "no loose ref here".
func isNotDir(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "not a directory")
}

func readPackedRef(commonDir, name string) (plumbing.Hash, bool, error) {
	f, err := os.Open(filepath.Join(commonDir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return plumbing.ZeroHash, false, nil
	}
	if err != nil {
		return plumbing.ZeroHash, false, fmt.Errorf("gitstate: read packed-refs: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	suffix := []byte(" " + name)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) < 41 || line[0] == '#' || line[0] == '^' {
			continue
		}
		if bytes.HasSuffix(line, suffix) && len(line) == 40+len(suffix) {
			return plumbing.NewHash(string(line[:40])), true, nil
		}
	}
	if err := sc.Err(); err != nil {
		return plumbing.ZeroHash, false, fmt.Errorf("gitstate: read packed-refs: %w", err)
	}
	return plumbing.ZeroHash, false, nil
}

// swapRef moves name from old to new with git's lock protocol: create
// "<ref>.lock" exclusively, check the current value, write and fsync the new
// value into the lock file, and rename it over the ref. The git CLI takes the
// same lock, so neither side ever sees a half-written ref. old is the zero
// hash when the ref must not exist yet. The caller holds the writer lock.
func (s *Store) swapRef(name string, old, new plumbing.Hash) error {
	refPath := filepath.Join(s.commonDir, filepath.FromSlash(name))
	lockPath := refPath + ".lock"
	f, err := s.createRefLock(refPath, lockPath)
	if err != nil {
		return err
	}
	committed := false
	defer func() {
		if !committed {
			f.Close()
			os.Remove(lockPath)
		}
		s.writer.clearSwap()
	}()
	cur, ok, err := readRef(s.commonDir, name)
	if err != nil {
		return err
	}
	if (!ok && !old.IsZero()) || (ok && cur != old) {
		return fmt.Errorf("gitstate: update %s: expected %s, found %s: %w", name, old, cur, ErrRefMoved)
	}
	if _, err := f.WriteString(new.String() + "\n"); err != nil {
		return fmt.Errorf("gitstate: write %s: %w", lockPath, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("gitstate: fsync %s: %w", lockPath, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("gitstate: close %s: %w", lockPath, err)
	}
	if err := os.Rename(lockPath, refPath); err != nil {
		os.Remove(lockPath)
		committed = true
		return fmt.Errorf("gitstate: rename %s: %w", lockPath, err)
	}
	committed = true
	return nil
}

// createRefLock creates "<ref>.lock" with O_EXCL, waiting with backoff while
// another program holds it. A lock left by a git codex writer that was killed
// mid-swap is recognised through the writer lock's swap marker and removed, so
// a crash never wedges the repository.
func (s *Store) createRefLock(refPath, lockPath string) (*os.File, error) {
	if s.writer.staleSwap() {
		os.Remove(lockPath)
	}
	if err := s.writer.markSwap(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(s.opts.LockTimeout)
	backoff := 100 * time.Microsecond
	for {
		f, err := os.OpenFile(lockPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			return f, nil
		}
		switch {
		case errors.Is(err, fs.ErrExist):
			// held by git (pack-refs, fetch, update-ref): wait.
		case errors.Is(err, fs.ErrNotExist):
			// the directory vanished (pack-refs prunes empty ref dirs).
			if err := os.MkdirAll(filepath.Dir(lockPath), 0o755); err != nil {
				return nil, fmt.Errorf("gitstate: create %s: %w", filepath.Dir(lockPath), err)
			}
			continue
		default:
			return nil, fmt.Errorf("gitstate: create %s: %w", lockPath, err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("gitstate: %s is held by another program; if no git command is running, remove it: %w", lockPath, ErrLockTimeout)
		}
		time.Sleep(backoff)
		if backoff < 20*time.Millisecond {
			backoff *= 2
		}
	}
}

package gitstate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// readRef reads a ref the way git does: the loose file first, then
// packed-refs. ok is false when the ref exists in neither. Reading the loose
// file before packed-refs is safe against a concurrent `git pack-refs`, which
// writes packed-refs before it deletes the loose file.
func readRef(commonDir, name string) (h plumbing.Hash, ok bool, err error) {
	b, err := readFileRaw(filepath.Join(commonDir, filepath.FromSlash(name)))
	switch {
	case err == nil:
		s := strings.TrimSpace(string(b))
		if !plumbing.IsHash(s) {
			return plumbing.ZeroHash, false, fmt.Errorf("gitstate: ref %s holds %q, not an object id", name, s)
		}
		return plumbing.NewHash(s), true, nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		// ENOTDIR: a path component is a file, so no loose ref here.
		return readPackedRef(commonDir, name)
	default:
		return plumbing.ZeroHash, false, fmt.Errorf("gitstate: read ref %s: %w", name, err)
	}
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
	cur, ok, err := readRef(s.commonDir, name)
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
			// the directory vanished (pack-refs prunes empty ref dirs).
			if mkdirs++; mkdirs > 100 {
				return fmt.Errorf("gitstate: create %s: %w", lockPath, err)
			}
			if err := s.writer.shared.mkdirAll(filepath.Dir(lockPath), s.commonDir); err != nil {
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

// listRefNames lists the refs under prefix (which ends in "/"), loose and
// packed, without a git process. Lock files are not refs.
func listRefNames(commonDir, prefix string) ([]string, error) {
	seen := map[string]bool{}
	root := filepath.Join(commonDir, filepath.FromSlash(prefix))
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || strings.HasSuffix(p, ".lock") {
			return nil
		}
		rel, err := filepath.Rel(commonDir, p)
		if err != nil {
			return err
		}
		seen[filepath.ToSlash(rel)] = true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("gitstate: list %s: %w", prefix, err)
	}
	b, err := os.ReadFile(filepath.Join(commonDir, "packed-refs"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("gitstate: read packed-refs: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if _, name, ok := strings.Cut(line, " "); ok && line[0] != '#' && line[0] != '^' && strings.HasPrefix(name, prefix) {
			seen[name] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

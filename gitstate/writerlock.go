package gitstate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// writerLock serialises git codex writers of one repository across
// processes: a kernel flock on "<common dir>/codex/writer.lock", held for the
// whole read-modify-write of a transaction. The kernel drops it when a holder
// dies, so a killed writer never blocks the next one.
//
// The file's content is a marker that lets the next holder clean up after a
// holder that died mid-swap, without ever mistaking a "<ref>.lock" that git
// holds for a dead writer's. Before it tries to take "<ref>.lock", a holder
// writes the new ref value into a staged file ("codex/swap.tmp"), fsyncs it,
// and records "swap <inode> <ref>.lock" in the marker; it then hard-links the
// staged file to "<ref>.lock" (link fails if the lock exists, like O_EXCL).
// So a "<ref>.lock" with the marker's inode is certainly a dead holder's and
// is removed; any other "<ref>.lock" (git's, or one a holder was still
// waiting for when it died) is left alone. The staged file keeps the inode
// allocated until the marker is cleared, so the number cannot be reused in
// between. An empty marker means no swap is in progress; the bare word
// "swap" (written by earlier versions, which held the marker only while
// owning "<ref>.lock") means the named ref's lock is a dead holder's.
type writerLock struct {
	path string
	f    *os.File // opened lazily, kept for the Store's life
	// noLink is set once the filesystem refused a hard link: the lock is
	// then created with O_EXCL and the marker updated right after, which
	// leaves a window of a few instructions in which a killed writer's lock
	// is not recognised (it then needs removing by hand).
	noLink bool
	// link is os.Link; tests replace it to exercise the O_EXCL fallback.
	link func(oldname, newname string) error
	// shared is core.sharedRepository, set before each lock: the modes
	// of the files and directories the lock and the swap create.
	shared sharedPerm
	// syncRef says the staged ref value is fsynced before it becomes the
	// ref: git's core.fsync component "reference" (not in git's default,
	// which leaves refs to the filesystem's ordering of a rename after
	// the data it replaces, as git's own ref writes do).
	syncRef bool
	// packs is the log of the packs writers wrote under this lock (see
	// packLog), read and written only by its holder.
	packs packLog
}

func (w *writerLock) commonDir() string { return filepath.Dir(filepath.Dir(w.path)) }
func (w *writerLock) stagePath() string { return filepath.Join(filepath.Dir(w.path), "swap.tmp") }

func (w *writerLock) lock() error {
	if w.f == nil {
		if err := w.shared.mkdirAll(filepath.Dir(w.path), w.commonDir()); err != nil {
			return fmt.Errorf("gitstate: create %s: %w", filepath.Dir(w.path), err)
		}
		f, err := os.OpenFile(w.path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("gitstate: open writer lock: %w", err)
		}
		w.shared.applyFd(int(f.Fd()))
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

// recoverSwap cleans up after a holder that died mid-swap: it removes the
// "<ref>.lock" the marker proves was that holder's, then clears the marker
// and the staged file. refLock is the lock a bare (old-style) marker means.
func (w *writerLock) recoverSwap(refLock string) {
	buf := make([]byte, 1024)
	n, _ := w.f.ReadAt(buf, 0)
	if n == 0 {
		return
	}
	f := strings.Fields(string(buf[:n]))
	switch {
	case len(f) == 1 && f[0] == "swap":
		os.Remove(refLock)
	case len(f) == 3 && f[0] == "swap" && strings.HasPrefix(f[2], "refs/") && strings.HasSuffix(f[2], ".lock") && !strings.Contains(f[2], ".."):
		lock := filepath.Join(w.commonDir(), filepath.FromSlash(f[2]))
		ino, err := strconv.ParseUint(f[1], 10, 64)
		if fi, serr := os.Lstat(lock); err == nil && serr == nil && inodeOf(fi) == ino {
			os.Remove(lock)
		}
	}
	w.f.Truncate(0)
	os.Remove(w.stagePath())
}

// stage writes content (the new ref value) into the staged lock file,
// fsyncs it, and records its inode and lock name in the marker.
func (w *writerLock) stage(lockName, content string) error {
	p := w.stagePath()
	ino, err := writeFileRaw(p, 0o644, []byte(content), w.syncRef)
	if errors.Is(err, fs.ErrExist) {
		// a leftover is stale (this process holds the writer lock): one
		// left by a writer killed before it marked it
		os.Remove(p)
		ino, err = writeFileRaw(p, 0o644, []byte(content), w.syncRef)
	}
	if err == nil {
		// the staged file becomes the ref: it gets the ref's mode
		w.shared.apply(p)
		err = w.mark(ino, lockName)
	}
	if err != nil {
		os.Remove(p)
		return fmt.Errorf("gitstate: stage ref lock: %w", err)
	}
	return nil
}

func (w *writerLock) mark(ino uint64, lockName string) error {
	if err := w.f.Truncate(0); err != nil {
		return err
	}
	_, err := w.f.WriteAt([]byte("swap "+strconv.FormatUint(ino, 10)+" "+lockName+"\n"), 0)
	return err
}

// place makes the staged file "<ref>.lock". Like O_EXCL creation, it fails
// with an error matching fs.ErrExist when the lock is held, and fs.ErrNotExist
// when its directory is missing.
func (w *writerLock) place(lockPath string) error {
	if !w.noLink {
		link := w.link
		if link == nil {
			link = os.Link
		}
		err := link(w.stagePath(), lockPath)
		if err == nil || errors.Is(err, fs.ErrExist) || errors.Is(err, fs.ErrNotExist) {
			return err
		}
		w.noLink = true // EPERM, EXDEV, ENOTSUP...: no hard links here
	}
	content, err := os.ReadFile(w.stagePath())
	if err != nil {
		return fmt.Errorf("gitstate: read staged ref lock: %w", err)
	}
	f, err := os.OpenFile(lockPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	w.shared.applyFd(int(f.Fd()))
	fi, err := f.Stat()
	if err == nil {
		lockName, _ := filepath.Rel(w.commonDir(), lockPath)
		err = w.mark(inodeOf(fi), filepath.ToSlash(lockName))
	}
	if err == nil {
		_, err = f.Write(content)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(lockPath)
		return fmt.Errorf("gitstate: write %s: %w", lockPath, err)
	}
	return nil
}

// unstage ends a swap, done or abandoned: the marker is cleared before the
// staged file (and with it, once the ref no longer links it, its inode) goes.
func (w *writerLock) unstage() {
	w.f.Truncate(0)
	os.Remove(w.stagePath())
}

func inodeOf(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

func (w *writerLock) close() error {
	perr := w.packs.close()
	if w.f == nil {
		return perr
	}
	err := w.f.Close()
	w.f = nil
	if err == nil {
		err = perr
	}
	return err
}

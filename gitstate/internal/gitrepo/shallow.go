package gitrepo

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// A shallow fetch (`git fetch --depth`, `--shallow-since`, and git codex's
// own first sync, which fetches the state over a window of days) leaves
// out the parents of the commits at its boundary and lists those commits
// in "<common dir>/shallow", one id a line. git reads them as commits
// without parents (a graft): its walks stop there, and `git fsck` and
// `git gc` do not look for what lies beyond. This reader does the same,
// so a walk of the state's history that reaches the boundary ends there
// instead of failing on a parent that was never fetched, which would look
// like a pruned object (STATE_UNREADABLE).

// Shallow is the set of commits git's shallow file lists (empty in a
// repository fetched whole).
type Shallow map[plumbing.Hash]bool

// ReadShallow reads the shallow file of the repository whose common git
// dir is commonDir; no file is an empty set. A line that is not an id is
// an error: git itself refuses such a file ("bad shallow line").
func ReadShallow(commonDir string) (Shallow, error) {
	b, err := os.ReadFile(filepath.Join(commonDir, "shallow"))
	if errors.Is(err, fs.ErrNotExist) {
		return Shallow{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("gitstate: read the shallow file: %w", err)
	}
	return parseShallow(b)
}

func parseShallow(b []byte) (Shallow, error) {
	out := Shallow{}
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) == 0 {
			continue
		}
		h, ok := parseHash(line)
		if !ok {
			return nil, fmt.Errorf("gitstate: the shallow file has a line that is not a commit id: %q", line)
		}
		out[h] = true
	}
	return out, nil
}

// shallowFile is the shallow file as last read, and what it was read
// from: git rewrites it (a rename) whenever a fetch moves the boundary, so
// a long-lived process reads it again when its inode, size or time differs.
type shallowFile struct {
	set   Shallow
	ino   uint64
	size  int64
	mtime time.Time
	read  bool
}

// Shallow returns the repository's shallow commits, read again when the
// file changed since the last call.
func (r *Repo) Shallow() (Shallow, error) {
	fi, err := os.Stat(filepath.Join(r.dir, "shallow"))
	if errors.Is(err, fs.ErrNotExist) {
		r.shallow = shallowFile{set: Shallow{}, read: true}
		return r.shallow.set, nil
	}
	if err != nil {
		return nil, fmt.Errorf("gitstate: read the shallow file: %w", err)
	}
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = uint64(st.Ino)
	}
	if r.shallow.read && r.shallow.ino == ino && r.shallow.size == fi.Size() && r.shallow.mtime.Equal(fi.ModTime()) {
		return r.shallow.set, nil
	}
	set, err := ReadShallow(r.dir)
	if err != nil {
		return nil, err
	}
	r.shallow = shallowFile{set: set, ino: ino, size: fi.Size(), mtime: fi.ModTime(), read: true}
	return set, nil
}

// Commit reads the commit h as git sees it in this repository: one the
// shallow file lists is marked Shallow, and Parents then names none.
func (r *Repo) Commit(h plumbing.Hash) (*Commit, error) {
	c, err := r.Objects.Commit(h)
	if err != nil {
		return nil, err
	}
	set, err := r.Shallow()
	if err != nil {
		return nil, err
	}
	c.Shallow = set[h]
	return c, nil
}

// Parents are the commits a walk of history goes on to from c: its
// parents, or none at a shallow boundary (git's graft). ParentHashes
// stays what the object holds, so the commit encodes to its own id.
func (c *Commit) Parents() []plumbing.Hash {
	if c.Shallow {
		return nil
	}
	return c.ParentHashes
}

// CommitOf decodes data, the content of the commit object h as Objects.Read
// returns it, into what Commit returns, marked Shallow if shallow lists it:
// for a reader that keeps commits' bytes (gitstate's kept commits) and reads
// the shallow file once for a whole walk.
func CommitOf(h plumbing.Hash, data []byte, shallow Shallow) (*Commit, error) {
	c, err := decodeCommit(data)
	if err != nil {
		return nil, fmt.Errorf("gitstate: decode commit %s: %w", h, err)
	}
	c.Hash = h
	c.Shallow = shallow[h]
	return c, nil
}

package gitrepo

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

	"github.com/go-git/go-git/v5/plumbing"
)

// ReadRef reads a ref the way git does: the loose file first, then
// packed-refs. ok is false when the ref exists in neither. Reading the loose
// file before packed-refs is safe against a concurrent `git pack-refs`, which
// writes packed-refs before it deletes the loose file.
func ReadRef(commonDir, name string) (h plumbing.Hash, ok bool, err error) {
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

// ListRefs lists the refs under prefix (which ends in "/"), loose and
// packed, without a git process. Lock files are not refs.
func ListRefs(commonDir, prefix string) ([]string, error) {
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

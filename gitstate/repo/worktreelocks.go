package repo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// StaleGitLocks lists the lock files git left in a worktree's git
// directory (index.lock, HEAD.lock) and on its branch
// (refs/heads/<branch>.lock) that no process holds: git keeps a lock
// file open for as long as it holds the lock, so one that no process has
// open and that is older than staleLockAge (git closes a lock file a
// moment before it renames it into place) was left by a git killed with
// the agent that ran it. Cleanup removes them (RemoveGitLocks) instead of
// stopping at them; a lock a live git holds is never listed. A lock no
// process holds that is younger than that is waited for until it is old
// enough (or gone, or taken again): cleanup run right after a crash
// (TestSpawnKilledAnyTime, a second after its kills) would otherwise
// stop at the branch a killed git had locked.
func (r *Repo) StaleGitLocks(ctx context.Context, worktree, branch string) []string {
	var candidates []string
	if worktree != "" {
		if out, err := exec.CommandContext(ctx, "git", "-C", worktree, "rev-parse", "--path-format=absolute", "--git-dir").Output(); err == nil {
			admin := strings.TrimSpace(string(out))
			candidates = append(candidates, filepath.Join(admin, "index.lock"), filepath.Join(admin, "HEAD.lock"))
		}
	}
	if branch != "" {
		candidates = append(candidates, filepath.Join(r.gitDir, "refs", "heads", filepath.FromSlash(branch)+".lock"))
	}
	stamps := map[string]time.Time{}
	var present []string
	for _, c := range candidates {
		if fi, err := os.Lstat(c); err == nil && fi.Mode().IsRegular() {
			present = append(present, c)
			stamps[c] = fi.ModTime()
		}
	}
	if len(present) == 0 {
		return nil
	}
	open := openFiles(present)
	var stale, young []string
	for _, p := range present {
		switch {
		case open[p]:
		case time.Since(stamps[p]) < staleLockAge:
			young = append(young, p)
		default:
			stale = append(stale, p)
		}
	}
	if len(young) == 0 {
		return stale
	}
	wait := time.Duration(0)
	for _, p := range young {
		wait = max(wait, staleLockAge-time.Since(stamps[p]))
	}
	select {
	case <-ctx.Done():
		return stale
	case <-time.After(wait):
	}
	var aged []string
	for _, p := range young {
		// still there, the same file (not taken again meanwhile)
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.ModTime().Equal(stamps[p]) {
			aged = append(aged, p)
		}
	}
	if len(aged) == 0 {
		return stale
	}
	open = openFiles(aged)
	for _, p := range aged {
		if !open[p] {
			stale = append(stale, p)
		}
	}
	return stale
}

// staleLockAge is how old a lock file must be before StaleGitLocks may
// take it for a leftover: git closes a lock file a moment before it
// renames it into place, and holds one for milliseconds.
const staleLockAge = 2 * time.Second

// RemoveGitLocks removes lock files StaleGitLocks found.
func (r *Repo) RemoveGitLocks(paths []string) error {
	var errs []error
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// openFiles reports which of paths some process has open, from the
// process table (/proc/<pid>/fd). Where there is no /proc, every path
// counts as open: nothing is taken for stale that cannot be checked.
func openFiles(paths []string) map[string]bool {
	want := map[string]bool{}
	for _, p := range paths {
		want[p] = true
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return want
	}
	open := map[string]bool{}
	for _, pe := range procs {
		if _, err := strconv.Atoi(pe.Name()); err != nil {
			continue
		}
		dir := filepath.Join("/proc", pe.Name(), "fd")
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue // gone, or not ours to look at (then not git's of this user either)
		}
		for _, fd := range fds {
			if target, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && want[target] {
				open[target] = true
			}
		}
	}
	return open
}

// IgnoredDir is where SaveIgnored puts the ignored files of name.
func (r *Repo) IgnoredDir(name string) string {
	return filepath.Join(r.gitDir, "codex", "rescue", name, "ignored")
}

// SaveIgnored moves the worktree's git-ignored files (paths relative to
// it, as WorkIn lists them) to "<git dir>/codex/rescue/<name>/ignored/",
// keeping their places, and returns that directory. They are never
// committed: ignored files are where secrets (.env) and local notes live,
// and refs/codex/* travel to every clone; this directory never leaves the
// machine.
func (r *Repo) SaveIgnored(ctx context.Context, name, worktree string, paths []string) (string, error) {
	dest := r.IgnoredDir(name)
	for _, p := range paths {
		rel := filepath.Clean(filepath.FromSlash(strings.TrimSuffix(p, "/")))
		if rel == "." || strings.HasPrefix(rel, "..") || filepath.IsAbs(rel) {
			continue
		}
		from, to := filepath.Join(worktree, rel), filepath.Join(dest, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return dest, fmt.Errorf("repo: save %s: %w", p, err)
		}
		if err := os.Rename(from, to); err != nil {
			// another filesystem: copy, then remove
			if out, cerr := exec.CommandContext(ctx, "cp", "-a", from, to).CombinedOutput(); cerr != nil {
				return dest, fmt.Errorf("repo: save %s: %v: %s", p, err, strings.TrimSpace(string(out)))
			}
			if err := os.RemoveAll(from); err != nil {
				return dest, fmt.Errorf("repo: save %s: %w", p, err)
			}
		}
	}
	return dest, nil
}

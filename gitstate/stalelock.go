package gitstate

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// staleLockAge is how old a remote-tracking ref's "<ref>.lock" must be
// before a sync takes it for the leftover of a killed fetch. git holds a
// ref's lock for the few milliseconds of the ref update; a fetch killed
// in that moment (an agent's terminal closed, a SIGKILL to its process
// group) leaves the lock behind, and every later fetch, ours or plain
// git's, would refuse that ref forever.
const staleLockAge = 2 * time.Second

// lockExists matches git's "Unable to create '<path>.lock': File exists."
var lockExists = regexp.MustCompile(`Unable to create '([^']+\.lock)': File exists`)

// removeStaleTrackingLocks removes the lock files that fetchErr says
// stopped a fetch from remote, when they are git codex's remote-tracking
// refs' (refs/codex/remotes/<remote>/...) and older than staleLockAge. It
// runs under the sync lock, so no git codex fetch holds them; a plain `git
// fetch` of the same refs holds one for milliseconds, never staleLockAge.
// Nothing else is touched: a lock on any other ref is reported as it is.
func (s *Store) removeStaleTrackingLocks(remote string, fetchErr error) {
	dir := filepath.Join(s.commonDir, filepath.FromSlash(remoteDir(remote)))
	for _, m := range lockExists.FindAllStringSubmatch(fetchErr.Error(), -1) {
		lock := filepath.Clean(m[1])
		if !filepath.IsAbs(lock) {
			lock = filepath.Join(s.commonDir, lock)
		}
		if !strings.HasPrefix(lock, dir+string(filepath.Separator)) {
			continue
		}
		if fi, err := os.Lstat(lock); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > staleLockAge {
			os.Remove(lock)
		}
	}
}

package gitstate

import (
	"strconv"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// sharedPerm is git's core.sharedRepository (gitrepo.SharedPerm), as the
// store's own files get it: its lock files, work marks and directories
// take the modes git gives its own files.
type sharedPerm gitrepo.SharedPerm

func (p sharedPerm) apply(path string)              { gitrepo.SharedPerm(p).Apply(path) }
func (p sharedPerm) applyFd(fd int)                 { gitrepo.SharedPerm(p).ApplyFd(fd) }
func (p sharedPerm) mkdirAll(dir, top string) error { return gitrepo.SharedPerm(p).MkdirAll(dir, top) }

// parseSharedRepository reads core.sharedRepository (a key without a
// value reads as "true", which is "group"); ok is false for a file mode
// git refuses (the owner must read and write).
func parseSharedRepository(v string) (sharedPerm, bool) {
	switch v {
	case "umask":
		return 0, true
	case "group":
		return sharedPerm(gitrepo.PermGroup), true
	case "all", "world", "everybody":
		return sharedPerm(gitrepo.PermEverybody), true
	}
	i, err := strconv.ParseInt(v, 8, 32)
	if err != nil {
		if configBool(v) {
			return sharedPerm(gitrepo.PermGroup), true
		}
		return 0, true
	}
	switch i {
	case 0:
		return 0, true
	case 1:
		return sharedPerm(gitrepo.PermGroup), true
	case 2:
		return sharedPerm(gitrepo.PermEverybody), true
	}
	if i&0o600 != 0o600 {
		return 0, false
	}
	return sharedPerm(-(i & 0o666)), true
}

package gitstate

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// sharedPerm is git's core.sharedRepository as git_config_perm reads it:
// 0 leaves modes to the umask; a positive value (0660 for "group", 0664
// for "all") adds those bits to every file and directory; a negative one
// is the exact mode -(value) to use. Git codex gives what it creates the
// modes git gives its own files (adjust_shared_perm), so that every member
// of the group can write the state, not only whoever wrote first.
type sharedPerm int

const (
	permGroup     sharedPerm = 0o660
	permEverybody sharedPerm = 0o664
)

// parseSharedRepository reads core.sharedRepository (a key without a
// value reads as "true", which is "group"); ok is false for a file mode
// git refuses (the owner must read and write).
func parseSharedRepository(v string) (sharedPerm, bool) {
	switch v {
	case "umask":
		return 0, true
	case "group":
		return permGroup, true
	case "all", "world", "everybody":
		return permEverybody, true
	}
	i, err := strconv.ParseInt(v, 8, 32)
	if err != nil {
		if configBool(v) {
			return permGroup, true
		}
		return 0, true
	}
	switch i {
	case 0:
		return 0, true
	case 1:
		return permGroup, true
	case 2:
		return permEverybody, true
	}
	if i&0o600 != 0o600 {
		return 0, false
	}
	return sharedPerm(-(i & 0o666)), true
}

// mode is calc_shared_perm, plus adjust_shared_perm's rules for
// directories (read bits copied to execute bits, set-group-ID when the
// group gains access).
func (p sharedPerm) mode(old uint32, dir bool) uint32 {
	tweak := uint32(p)
	if p < 0 {
		tweak = uint32(-p)
	}
	if old&0o200 == 0 {
		tweak &^= 0o222
	}
	if old&0o100 != 0 {
		tweak |= (tweak & 0o444) >> 2
	}
	mode := old | tweak
	if p < 0 {
		mode = old&^0o777 | tweak
	}
	if dir {
		mode |= (mode & 0o444) >> 2
		if mode&0o060 != 0 {
			mode |= syscall.S_ISGID
		}
	}
	return mode
}

// apply gives path the mode git would (adjust_shared_perm); nothing when
// the repository is not shared. Errors are left to the next access.
func (p sharedPerm) apply(path string) {
	if p == 0 {
		return
	}
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return
	}
	old := uint32(st.Mode) & 0o7777
	dir := uint32(st.Mode)&syscall.S_IFMT == syscall.S_IFDIR
	if m := p.mode(old, dir); m != old {
		syscall.Chmod(path, m)
	}
}

// applyFd is apply on an open file.
func (p sharedPerm) applyFd(fd int) {
	if p == 0 {
		return
	}
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil {
		return
	}
	old := uint32(st.Mode) & 0o7777
	if m := p.mode(old, false); m != old {
		syscall.Fchmod(fd, m)
	}
}

// mkdirAll is os.MkdirAll that gives every directory it makes below top
// the shared mode.
func (p sharedPerm) mkdirAll(dir, top string) error {
	if p == 0 {
		return os.MkdirAll(dir, 0o755)
	}
	var made []string
	for d := dir; strings.HasPrefix(d, top) && d != top; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		made = append(made, d)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := len(made) - 1; i >= 0; i-- {
		p.apply(made[i])
	}
	return nil
}

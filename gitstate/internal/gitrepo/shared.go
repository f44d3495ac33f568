package gitrepo

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// SharedPerm is git's core.sharedRepository as git_config_perm reads it:
// 0 leaves modes to the umask; a positive value (0660 for "group", 0664
// for "all") adds those bits to every file and directory; a negative one
// is the exact mode -(value) to use. Git codex gives what it creates the
// modes git gives its own files (adjust_shared_perm), so that every member
// of the group can write the state, not only whoever wrote first.
type SharedPerm int

// sharedPerm is SharedPerm under the name packwrite.go knows it by.
type sharedPerm = SharedPerm

// The modes of core.sharedRepository's names.
const (
	PermGroup     SharedPerm = 0o660
	PermEverybody SharedPerm = 0o664
)

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

// Mode is the mode git gives a file (dir false) or directory whose mode
// would otherwise be old.
func (p SharedPerm) Mode(old uint32, dir bool) uint32 { return p.mode(old, dir) }

// Apply gives path the mode git would; nothing when the repository is not
// shared.
func (p SharedPerm) Apply(path string) { p.apply(path) }

// ApplyFd is Apply on an open file.
func (p SharedPerm) ApplyFd(fd int) { p.applyFd(fd) }

// MkdirAll is os.MkdirAll that gives every directory it makes below top
// the shared mode.
func (p SharedPerm) MkdirAll(dir, top string) error { return p.mkdirAll(dir, top) }

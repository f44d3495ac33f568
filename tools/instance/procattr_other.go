//go:build !linux

package instance

import "syscall"

// ProcAttr starts a delegated turn's agent CLI as the leader of its
// own process group. There is no parent-death signal outside Linux: an
// agent whose runner was SIGKILLed runs until its turn's wall-clock limit
// ends it or `git codex reap` marks the turn failed (docs/DELEGATION.md).
func ProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

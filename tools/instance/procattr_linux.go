package instance

import "syscall"

// ProcAttr is how a delegated turn's agent CLI is started: as the
// leader of its own process group (so a stop signals everything the turn
// started), and killed by the kernel if the runner dies (Linux's
// parent-death signal), so a SIGKILLed runner leaves no agent behind.
func ProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

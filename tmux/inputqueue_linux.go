package tmux

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

// ttyInputQueued asks the terminal at path how many bytes of input wait
// to be read (TIOCINQ). The terminal is opened without becoming anyone's
// controlling terminal and without blocking; nothing is read from it.
func ttyInputQueued(path string) (int, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return 0, fmt.Errorf("open the pane's terminal: %w", err)
	}
	defer f.Close()
	var n int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); errno != 0 {
		return 0, fmt.Errorf("TIOCINQ on %s: %w", path, errno)
	}
	return int(n), nil
}

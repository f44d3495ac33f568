package prompts

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// Size caps of what the registry reads: a Climpt registry.json is a few
// kilobytes, a template a few more.
const (
	MaxRegistryBytes = 4 << 20
	MaxTemplateBytes = 1 << 20
)

// ReadFile reads a file of the working tree only if it is a regular file
// of at most limit bytes. Anyone who can write the working tree (an agent
// in its own worktree) decides what is there: a FIFO would block open()
// for ever, a device (/dev/zero) or a huge file would grow memory without
// bound. The file is opened without blocking (O_NONBLOCK: a FIFO with no
// writer opens at once), checked on the descriptor it opened (fstat, so a
// file swapped in between cannot slip past), and read no further than the
// limit, in case it grows while it is read.
func ReadFile(name string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s); only regular files are read", describeMode(fi.Mode()))
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%d bytes; the limit is %d", fi.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("grew past the limit of %d bytes while it was read", limit)
	}
	return data, nil
}

func describeMode(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return m.Type().String()
}

package tmux

import (
	"context"
	"strings"
)

// InputPending is how many bytes typed into the session's pane wait in
// its terminal for the program to read them. A program that reads whole
// lines (the terminal in its default, canonical mode) has them counted
// once Enter completed the line: more than zero after Enter means the
// line was taken by the terminal but not yet read; zero, that it was read
// (or that the program reads keys as they come, as full-screen programs
// do). It reads the pane's terminal with an ioctl, which only the pane
// owner's processes on this machine may do; elsewhere it fails with
// ErrNotSupported.
func (r Runner) InputPending(ctx context.Context, name string) (int, error) {
	const op = "display-message"
	if err := CheckName(name); err != nil {
		return 0, opError(op, name, err)
	}
	out, err := r.run(ctx, op, name, true, op, "-p", "-t", paneTarget(name), "#{pane_tty}")
	if err != nil {
		return 0, err
	}
	tty := strings.TrimSpace(out)
	n, err := ttyInputQueued(tty)
	if err != nil {
		return 0, opError(op, name, err)
	}
	return n, nil
}

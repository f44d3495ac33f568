//go:build !linux

package tmux

import "fmt"

// ttyInputQueued is Linux's TIOCINQ; elsewhere it is not asked.
func ttyInputQueued(path string) (int, error) {
	return 0, fmt.Errorf("input queue of %s: %w", path, ErrNotSupported)
}

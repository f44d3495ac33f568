package gitstate

import "os"

// Exports of unexported functions for the tests in package gitstate_test.

// SplitPath is splitPath.
func SplitPath(path string) ([]string, error) { return splitPath(path) }

// FormatMessage renders m as the commit message of a commit at clock c.
func FormatMessage(m Meta, c Clock) string { return m.message(c) }

// ParseMessage is parseMessage.
func ParseMessage(msg string) Meta { return parseMessage(msg) }

// ClockOf is clockOf.
func ClockOf(msg string) Clock { return clockOf(msg) }

// SetSwapHook installs fn to be called at named stages of a ref swap
// ("wait": "<ref>.lock" is held by someone else; "locked": this writer holds
// it and is about to move the ref).
func SetSwapHook(fn func(stage string)) { swapHook = fn }

// SetLinkFunc replaces the hard link used to place "<ref>.lock" (nil
// restores os.Link), so tests can run the O_EXCL fallback for filesystems
// without hard links.
func SetLinkFunc(fn func(oldname, newname string) error) {
	if fn == nil {
		fn = os.Link
	}
	linkFile = fn
}

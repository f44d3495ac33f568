// Package gitstatetest makes real git repositories in temporary directories
// for tests, and runs the real git CLI against them.
package gitstatetest

import (
	"os/exec"
	"strings"
	"testing"
)

// NewRepo runs `git init` in a fresh temporary directory and returns its
// path. gc runs in the foreground there, so no detached gc outlives a test.
func NewRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	Git(t, dir, "init", "-q", "-b", "main")
	Git(t, dir, "config", "user.name", "Test User")
	Git(t, dir, "config", "user.email", "test@example.com")
	Git(t, dir, "config", "gc.autoDetach", "false")
	return dir
}

// Git runs git in dir and returns its trimmed stdout; it fails the test on
// a non-zero exit.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := GitErr(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// GitErr runs git in dir and returns its trimmed combined output.
func GitErr(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

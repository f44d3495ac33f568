// Package gitstatetest makes real git repositories in temporary directories
// for tests, and runs the real git CLI against them.
package gitstatetest

import (
	"bytes"
	"encoding/hex"
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

// TreeEntry is one entry of a tree object written by WriteTree.
type TreeEntry struct {
	Mode string // as git writes it: "100644", "40000", ...
	Name string
	Hash string // hex
}

// WriteTree writes a tree object into the repository at dir exactly as
// given: entries in the order given, duplicates and illegal names kept (it
// uses `git hash-object --literally`, which checks nothing), so tests can
// play a hostile peer. It returns the tree's hash.
func WriteTree(t testing.TB, dir string, entries []TreeEntry) string {
	t.Helper()
	var raw []byte
	for _, e := range entries {
		h, err := hex.DecodeString(e.Hash)
		if err != nil {
			t.Fatalf("tree entry %q: %v", e.Name, err)
		}
		raw = append(raw, e.Mode+" "+e.Name+"\x00"...)
		raw = append(raw, h...)
	}
	return WriteObject(t, dir, "tree", raw)
}

// WriteObject writes an object of type typ with content data, unchecked
// (`git hash-object --literally`), and returns its hash.
func WriteObject(t testing.TB, dir, typ string, data []byte) string {
	t.Helper()
	cmd := exec.Command("git", "hash-object", "--literally", "-t", typ, "-w", "--stdin")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git hash-object -t %s: %v", typ, err)
	}
	return strings.TrimSpace(string(out))
}

// ReadTree lists the tree (or commit's tree) rev in the repository at dir.
func ReadTree(t testing.TB, dir, rev string) []TreeEntry {
	t.Helper()
	var out []TreeEntry
	for _, line := range strings.Split(Git(t, dir, "ls-tree", "-z", rev), "\x00") {
		if line == "" {
			continue
		}
		meta, name, _ := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		mode := f[0]
		if mode == "040000" {
			mode = "40000"
		}
		out = append(out, TreeEntry{Mode: mode, Name: name, Hash: f[2]})
	}
	return out
}

// CommitTree writes a state commit of tree with the given parents and
// message (git commit-tree) in the repository at dir, and returns its hash.
func CommitTree(t testing.TB, dir, tree, message string, parents ...string) string {
	t.Helper()
	args := []string{"-c", "user.name=Mallory", "-c", "user.email=mallory@example.com", "commit-tree", tree, "-m", message}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	return Git(t, dir, args...)
}

// Package gitstatetest makes real git repositories in temporary directories
// for tests, and runs the real git CLI against them.
package gitstatetest

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// NewRepo runs `git init` in a fresh temporary directory and returns its
// path. gc runs in the foreground there, and the test waits at its end for
// the repacks the store started in the background (WaitForMaintenance), so
// no git process outlives a test or writes into its removed directory.
func NewRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	t.Cleanup(func() { WaitForMaintenance(t, dir) })
	Git(t, dir, "init", "-q", "-b", "main")
	Git(t, dir, "config", "user.name", "Test User")
	Git(t, dir, "config", "user.email", "test@example.com")
	Git(t, dir, "config", "gc.autoDetach", "false")
	return dir
}

// ReadsOnState makes the repository in dir record reads and refusals on
// refs/codex/state, as every call was before issue 27 (codex.reads=state),
// for the tests of that mode; the default, which NewRepo leaves, records
// them on this machine's reads ref. Stores opened before do not see it.
func ReadsOnState(t testing.TB, dir string) {
	t.Helper()
	Git(t, dir, "config", "codex.reads", "state")
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

// GitErr runs git in dir and returns its trimmed combined output. git fsck
// first waits for the maintenance the store started in the background: it
// checks a repository at rest, and reports a pack deleted under it by a
// repack as an error.
func GitErr(dir string, args ...string) (string, error) {
	for _, a := range args {
		if a == "fsck" {
			waitForMaintenance(dir)
			break
		}
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// IndexGit returns a git runner in dir over an index file of its own
// (GIT_INDEX_FILE), for building trees by hand with read-tree,
// update-index and write-tree, as a person's plumbing would, without
// touching the repository's index.
func IndexGit(t testing.TB, dir string) func(args ...string) string {
	index := filepath.Join(t.TempDir(), "index")
	return func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+index)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
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

// WaitForMaintenance waits until no repack or maintenance git codex started
// in the background in the repository at dir is running: each holds a
// flock on "<common dir>/codex/<name>.lock" while it runs (see
// gitstate's startBackground). It fails the test after a minute.
func WaitForMaintenance(t testing.TB, dir string) {
	t.Helper()
	if err := waitForMaintenance(dir); err != nil {
		t.Error(err)
	}
}

func waitForMaintenance(dir string) error {
	out, err := exec.Command("git", "-C", dir, "rev-parse", "--path-format=absolute", "--git-common-dir").Output()
	if err != nil {
		return nil // no repository (any more): nothing runs in it
	}
	common := strings.TrimSpace(string(out))
	return WaitForLocks(common)
}

// WaitForLocks waits for the background-maintenance locks under the git
// common dir common (see WaitForMaintenance), and for a git gc that runs
// there (a detached gc --auto: gc.pid names a live process on this host),
// for at most a minute.
func WaitForLocks(common string) error {
	host, _ := os.Hostname()
	deadline := time.Now().Add(time.Minute)
	for {
		b, err := os.ReadFile(filepath.Join(common, "gc.pid"))
		var pid int
		var h string
		if err != nil || func() bool { n, _ := fmt.Sscanf(string(b), "%d %s", &pid, &h); return n != 2 }() || h != host || syscall.Kill(pid, 0) != nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("git gc (pid %d) still running in %s after a minute", pid, common)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, name := range []string{"repack", "maintenance", "midx"} {
		f, err := os.Open(filepath.Join(common, "codex", name+".lock"))
		if err != nil {
			continue // never started
		}
		deadline := time.Now().Add(time.Minute)
		for syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) != nil {
			if time.Now().After(deadline) {
				f.Close()
				return fmt.Errorf("git %s started by git codex in %s still running after a minute", name, common)
			}
			time.Sleep(10 * time.Millisecond)
		}
		f.Close()
	}
	return nil
}

package gitrepo

import (
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

func catFile(t *testing.T, dir, typ, h string) []byte {
	t.Helper()
	cmd := exec.Command("git", "cat-file", typ, h)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git cat-file %s %s: %v", typ, h, err)
	}
	return out
}

func hashObject(t *testing.T, dir, typ string, data []byte) string {
	t.Helper()
	cmd := exec.Command("git", "hash-object", "-t", typ, "-w", "--stdin", "--literally")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(string(data))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git hash-object: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestTreeCodecMatchesGit: trees git wrote (names whose order depends on
// the "/" git appends to directories) decode and, re-sorted from a shuffle,
// encode to the same bytes and hash.
func TestTreeCodecMatchesGit(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	for _, p := range []string{"a-b", "a.b", "a0", "b/x", "a/b/c", "a+/y", "z", "émoji ✓", "sp ace", "x/.hidden"} {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	gitstatetest.Git(t, dir, "add", "-A")
	root := gitstatetest.Git(t, dir, "write-tree")
	rng := rand.New(rand.NewSource(1))
	for _, h := range []string{root, gitstatetest.Git(t, dir, "rev-parse", root+":a"), gitstatetest.Git(t, dir, "rev-parse", root+":a/b")} {
		raw := catFile(t, dir, "tree", h)
		tr, err := decodeTree(raw)
		if err != nil {
			t.Fatalf("decode %s: %v", h, err)
		}
		rng.Shuffle(len(tr.Entries), func(i, j int) { tr.Entries[i], tr.Entries[j] = tr.Entries[j], tr.Entries[i] })
		SortTreeEntries(tr.Entries)
		got, err := tr.encode()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(raw) {
			t.Errorf("tree %s re-encoded differs:\n got  %q\n want %q", h, got, raw)
		}
		if ph := plumbing.ComputeHash(plumbing.TreeObject, got); ph.String() != h {
			t.Errorf("tree hash %s, want %s", ph, h)
		}
	}
	raw := catFile(t, dir, "tree", root)
	tr, _ := decodeTree(raw)
	modes := map[string]filemode.FileMode{}
	for _, e := range tr.Entries {
		modes[e.Name] = e.Mode
	}
	if modes["a"] != filemode.Dir || modes["a0"] != filemode.Regular || modes["run.sh"] != filemode.Executable || modes["link"] != filemode.Symlink {
		t.Errorf("modes = %v", modes)
	}
	// a mode git reads as a regular file, written oddly by an old tool
	odd := []byte("100664 f\x00" + strings.Repeat("\x01", 20))
	if tr, err := decodeTree(odd); err != nil || tr.Entries[0].Mode != filemode.Regular {
		t.Errorf("100664 decodes to %v, %v; want a regular file", tr, err)
	}
	for _, bad := range []string{"100644 f", "100644 f\x00short", "abc f\x00" + strings.Repeat("\x01", 20), "100644 \x00" + strings.Repeat("\x01", 20)} {
		if _, err := decodeTree([]byte(bad)); err == nil {
			t.Errorf("decodeTree(%q) succeeded, want an error", bad)
		}
	}
	for _, bad := range []Tree{
		{Entries: []TreeEntry{{Name: "b", Mode: filemode.Regular}, {Name: "a", Mode: filemode.Regular}}},
		{Entries: []TreeEntry{{Name: "a", Mode: filemode.Regular}, {Name: "a", Mode: filemode.Regular}}},
		{Entries: []TreeEntry{{Name: "a/b", Mode: filemode.Regular}}},
		{Entries: []TreeEntry{{Name: "", Mode: filemode.Regular}}},
	} {
		if _, err := bad.encode(); err == nil {
			t.Errorf("encode(%v) succeeded, want an error", bad.Entries)
		}
	}
}

// TestCommitCodecMatchesGit: commits git wrote decode to their fields, and
// those without headers the store never writes re-encode to the same bytes.
func TestCommitCodecMatchesGit(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	tree := gitstatetest.Git(t, dir, "write-tree")
	commit := func(date, msg string, parents ...string) string {
		args := []string{"commit-tree", tree, "-m", msg}
		for _, p := range parents {
			args = append(args, "-p", p)
		}
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date,
			"GIT_AUTHOR_NAME=Ann Author", "GIT_AUTHOR_EMAIL=ann@example.com")
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	c1 := commit("2026-11-24T03:00:00+05:30", "first\n\nbody line\nCodex-Tool: x")
	c2 := commit("2026-11-24T03:00:00-00:30", "second", c1)
	c3 := commit("1970-01-01T00:00:01Z", "merge", c1, c2)
	for _, h := range []string{c1, c2, c3} {
		raw := catFile(t, dir, "commit", h)
		c, err := decodeCommit(raw)
		if err != nil {
			t.Fatalf("decode %s: %v", h, err)
		}
		got, _ := c.encode()
		if string(got) != string(raw) {
			t.Errorf("commit %s re-encoded differs:\n got  %q\n want %q", h, got, raw)
		}
		if c.TreeHash.String() != tree || c.Author.Name != "Ann Author" || c.Author.Email != "ann@example.com" {
			t.Errorf("commit %s decoded as %+v", h, c)
		}
	}
	c, _ := decodeCommit(catFile(t, dir, "commit", c2))
	if _, off := c.Committer.When.Zone(); off != -30*60 || c.ParentHashes[0].String() != c1 || c.Message != "second\n" {
		t.Errorf("second commit: zone offset %d, parents %v, message %q", off, c.ParentHashes, c.Message)
	}
	c, _ = decodeCommit(catFile(t, dir, "commit", c3))
	if len(c.ParentHashes) != 2 || c.ParentHashes[1].String() != c2 {
		t.Errorf("merge parents = %v", c.ParentHashes)
	}

	// headers the store never writes (a signature, an encoding, a merge
	// tag) and their continuation lines are skipped, not mistaken for the
	// message.
	raw := catFile(t, dir, "commit", c1)
	head, msg, _ := strings.Cut(string(raw), "\n\n")
	signed := head + "\nencoding ISO-8859-1\nmergetag object " + c1 + "\n type commit\n tag v1\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEz\n -----END PGP SIGNATURE-----\n\n" + msg
	sh := hashObject(t, dir, "commit", []byte(signed))
	c, err := decodeCommit(catFile(t, dir, "commit", sh))
	if err != nil || c.Message != msg || c.TreeHash.String() != tree || c.Committer.Email != "test@example.com" {
		t.Errorf("signed commit decoded as %+v, %v; want message %q", c, err, msg)
	}

	// the store's own commits: what it encodes, git reads back unchanged
	when := time.Date(2026, 11, 24, 3, 4, 5, 0, time.FixedZone("", 9*3600))
	ours := &Commit{TreeHash: plumbing.NewHash(tree), ParentHashes: []plumbing.Hash{plumbing.NewHash(c1)},
		Author: Signature{Name: "agent a-1", Email: "a-1@codex", When: when}, Committer: Signature{Name: "git codex", Email: "codex@localhost", When: when},
		Message: "mail_send: hello\n\nCodex-Tool: mail_send\n"}
	data, _ := ours.encode()
	oh := hashObject(t, dir, "commit", data)
	if got := catFile(t, dir, "commit", oh); string(got) != string(data) {
		t.Errorf("git reads %q, we wrote %q", got, data)
	}
	if out := gitstatetest.Git(t, dir, "log", "-1", "--format=%an|%ae|%ad|%P", "--date=iso-strict", oh); out != "agent a-1|a-1@codex|2026-11-24T03:04:05+09:00|"+c1 {
		t.Errorf("git log says %q", out)
	}
	for _, bad := range []string{"", "parent " + c1 + "\n\nmsg", "tree xyz\n\nmsg"} {
		if _, err := decodeCommit([]byte(bad)); err == nil {
			t.Errorf("decodeCommit(%q) succeeded, want an error", bad)
		}
	}
}

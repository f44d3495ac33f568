package gitrepo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// A commit at the boundary of a shallow clone git made reads as git reads
// it: Shallow, with no parents to walk to (the parent was never fetched:
// reading it is ErrObjectMissing, which is not what the boundary means),
// while ParentHashes keeps what the object holds, so it encodes to its own
// id. The shallow file is read again when git rewrites it.
func TestShallowBoundaryAsGitReadsIt(t *testing.T) {
	origin := gitstatetest.NewRepo(t)
	for _, m := range []string{"one", "two", "three"} {
		gitstatetest.Git(t, origin, "commit", "-q", "--allow-empty", "-m", m)
	}
	dir := filepath.Join(t.TempDir(), "clone")
	gitstatetest.Git(t, origin, "clone", "-q", "--depth", "2", "file://"+origin, dir)
	common := filepath.Join(dir, ".git")
	r := Open(common, filepath.Join(common, "codex", "tmp"))
	t.Cleanup(r.Close)

	tip := plumbing.NewHash(gitstatetest.Git(t, dir, "rev-parse", "HEAD"))
	boundary := plumbing.NewHash(gitstatetest.Git(t, dir, "rev-parse", "HEAD~1"))
	missing := plumbing.NewHash(gitstatetest.Git(t, origin, "rev-parse", "HEAD~2"))

	c, err := r.Commit(tip)
	if err != nil || c.Shallow || len(c.Parents()) != 1 {
		t.Fatalf("tip: %+v, %v; want an ordinary commit", c, err)
	}
	c, err = r.Commit(boundary)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Shallow || c.Parents() != nil {
		t.Errorf("boundary: Shallow %v, Parents %v; want a root to walks", c.Shallow, c.Parents())
	}
	if len(c.ParentHashes) != 1 || c.ParentHashes[0] != missing {
		t.Errorf("boundary's ParentHashes %v, want the object's parent %s", c.ParentHashes, missing)
	}
	data, err := c.encode()
	if err != nil || plumbing.ComputeHash(plumbing.CommitObject, data) != boundary {
		t.Errorf("the boundary commit does not encode to its id (%v)", err)
	}
	if _, err := r.Commit(missing); !errors.Is(err, ErrObjectMissing) {
		t.Errorf("the parent beyond the boundary: %v, want ErrObjectMissing", err)
	}

	// git deepens: the file is rewritten, and read again
	gitstatetest.Git(t, dir, "fetch", "-q", "--unshallow")
	if c, err := r.Commit(boundary); err != nil || c.Shallow || len(c.Parents()) != 1 {
		t.Errorf("after --unshallow: %+v, %v; want an ordinary commit", c, err)
	}
	if set, err := r.Shallow(); err != nil || len(set) != 0 {
		t.Errorf("after --unshallow: shallow set %v, %v", set, err)
	}

	// a line git itself would refuse is an error, not an empty set
	if err := os.WriteFile(filepath.Join(common, "shallow"), []byte("not-an-id\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit(tip); err == nil || !strings.Contains(err.Error(), "shallow file") {
		t.Errorf("a malformed shallow file: %v", err)
	}
}

func TestParseShallow(t *testing.T) {
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
	set, err := parseShallow([]byte(a + "\n" + b + "\r\n\n"))
	if err != nil || len(set) != 2 || !set[plumbing.NewHash(a)] || !set[plumbing.NewHash(b)] {
		t.Errorf("parseShallow: %v, %v", set, err)
	}
	if _, err := parseShallow([]byte(a + "x\n")); err == nil {
		t.Error("a 41-character line was taken")
	}
}

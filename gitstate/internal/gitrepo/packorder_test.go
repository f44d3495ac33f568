package gitrepo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestCruftPackSearchedLast: a lookup that misses the newest pack tries the
// other packs before a cruft pack (git gc's unreachable objects, with a
// .mtimes), even a cruft pack newer than they are, so a read of what is
// reachable never opens it; what is in it is still found.
func TestCruftPackSearchedLast(t *testing.T) {
	dir := t.TempDir()
	git := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("", "init", "-q")
	reachable := plumbing.NewHash(git("reachable\n", "hash-object", "-w", "--stdin"))
	tree := git("100644 blob "+reachable.String()+"\tf\n", "mktree")
	git("", "update-ref", "refs/heads/main", git("", "commit-tree", "-m", "c", tree))
	unreachable := plumbing.NewHash(git("unreachable\n", "hash-object", "-w", "--stdin"))
	git("", "repack", "-q", "-d", "--cruft")
	newest := plumbing.NewHash(git("newest\n", "hash-object", "-w", "--stdin"))
	git("", "update-ref", "refs/heads/newest", git("", "commit-tree", "-m", "n", git("100644 blob "+newest.String()+"\tn\n", "mktree")))
	git("", "repack", "-q", "-d")
	// mtimes: the reachable objects' pack oldest, the cruft pack newer,
	// the newest pack newest
	packDir := filepath.Join(dir, ".git", "objects", "pack")
	idxs, _ := filepath.Glob(filepath.Join(packDir, "pack-*.idx"))
	if len(idxs) != 3 {
		t.Fatalf("%d packs, want 3 (the reachable, a cruft pack, the newest)", len(idxs))
	}
	now := time.Now()
	for _, idx := range idxs {
		age := 3 * time.Hour
		switch name := strings.TrimSuffix(idx, ".idx"); {
		case fileExists(name + ".mtimes"):
			age = 2 * time.Hour
		case packHolds(t, dir, idx, newest):
			age = time.Hour
		}
		for _, f := range []string{idx, strings.TrimSuffix(idx, ".idx") + ".pack"} {
			if err := os.Chtimes(f, now.Add(-age), now.Add(-age)); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := Open(filepath.Join(dir, ".git"), t.TempDir())
	defer r.Close()
	for _, h := range []plumbing.Hash{newest, reachable} {
		if err := r.Has(h); err != nil {
			t.Fatalf("has %s: %v", h, err)
		}
	}
	if opened, known := r.PackCounts(); opened != 2 || known != 3 {
		t.Errorf("reading the newest and the reachable objects opened %d of %d packs, want 2 (not the cruft pack)", opened, known)
	}
	if data, err := r.Blob(unreachable); err != nil || string(data) != "unreachable\n" {
		t.Errorf("the cruft pack's object: %q, %v", data, err)
	}
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// packHolds reports whether the pack of index idx holds h (git's own reading).
func packHolds(t *testing.T, dir, idx string, h plumbing.Hash) bool {
	t.Helper()
	cmd := exec.Command("git", "-C", dir, "show-index")
	f, err := os.Open(idx)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd.Stdin = f
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(out), h.String())
}

package gitrepo

import (
	"fmt"
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

// TestPacksDeletedByARepackAreClosed: a process that writes a pack at a
// time and reads what it wrote, beside git's repack deleting those packs,
// finds everything in the packs it knows and so never misses a lookup;
// it still lets go of the deleted ones (scanning the directory every
// rescanAfter packs added): what it holds open of deleted packs stays
// bounded, where it grew with every write.
func TestPacksDeletedByARepackAreClosed(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd to count open files by")
	}
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	objects := filepath.Join(dir, ".git", "objects")
	o := &Objects{dir: objects, tmpDir: t.TempDir(), phase: func(string) {}}
	defer o.Close()
	if err := o.scan(); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(objects) // as /proc names the files
	if err != nil {
		t.Fatal(err)
	}
	deletedOpen := func() int {
		fds, _ := os.ReadDir("/proc/self/fd")
		n := 0
		for _, fd := range fds {
			if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil &&
				strings.HasPrefix(target, real+"/pack/") && strings.HasSuffix(target, " (deleted)") {
				n++
			}
		}
		return n
	}
	var blobs []plumbing.Hash
	most := 0
	for i := range 5 * rescanAfter {
		var b objectBatch
		blobs = append(blobs, b.add(plumbing.BlobObject, []byte(fmt.Sprintf("record %d\n", i))))
		if err := o.Write(&b); err != nil {
			t.Fatal(err)
		}
		o.ReleaseKeeps()
		if _, err := o.read(plumbing.BlobObject, blobs[i]); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		if i%8 == 7 {
			// git rolls every pack up: the ones this process has open are deleted
			// (the blobs are kept by no ref, so -a with -k: repack keeps them)
			if out, err := exec.Command("git", "-C", dir, "repack", "-a", "-d", "-k", "-q").CombinedOutput(); err != nil {
				t.Fatalf("git repack: %v\n%s", err, out)
			}
		}
		most = max(most, deletedOpen())
	}
	if most > rescanAfter+16 {
		t.Errorf("held up to %d deleted packs open, want at most about %d", most, rescanAfter)
	}
	for i, h := range blobs {
		if _, err := o.read(plumbing.BlobObject, h); err != nil {
			t.Fatalf("read %d after: %v", i, err)
		}
	}
}

package repo_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestRemoveWorktreeKilledBeforeItsGitdir: `git worktree add` killed right
// after it locked its admin directory "initializing" and before it wrote
// the gitdir file leaves a directory git neither unlocks (it cannot find
// it from the path) nor prunes (it is locked). RemoveWorktree removes
// that lock, so git prunes it, and the next worktree of that name works.
func TestRemoveWorktreeKilledBeforeItsGitdir(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	gitstatetest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
	s := openRepo(t, dir)
	path := filepath.Join(t.TempDir(), "c6")
	admin := filepath.Join(dir, ".git", "worktrees", "c6")
	if err := os.MkdirAll(admin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(admin, "locked"), []byte("initializing"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.RemoveWorktree(ctx, path); err != nil {
		t.Fatalf("remove: %v", err)
	}
	if _, err := os.Stat(admin); err == nil {
		t.Fatalf("the half-made admin directory is still there")
	}
	if err := s.AddWorktree(ctx, path, "codex/c6", "HEAD"); err != nil {
		t.Fatalf("a new worktree of that name: %v", err)
	}
	if out, err := gitstatetest.GitErr(dir, "worktree", "list"); err != nil {
		t.Fatalf("git worktree list: %v\n%s", err, out)
	}
}

// halfMadeAt makes what `git worktree add -b <branch> <path>` (git 2.39)
// leaves when killed at step: it creates the branch (a `git branch`
// child), then the admin directory "worktrees/<name>" and its "locked"
// file, the worktree's directory, the admin's gitdir, the worktree's .git
// file, the admin's HEAD (the null id) and commondir, and only then points
// HEAD at the branch and checks out. Each file is opened (truncated) and
// then written, so a kill between the two leaves it empty.
func halfMadeAt(t *testing.T, dir, path, branch, step string) (admin string) {
	t.Helper()
	gitstatetest.Git(t, dir, "branch", branch, "HEAD")
	admin = filepath.Join(dir, ".git", "worktrees", filepath.Base(path))
	files := []struct{ name, content string }{
		{filepath.Join(admin, "locked"), "initializing"},
		{filepath.Join(admin, "gitdir"), filepath.Join(path, ".git") + "\n"},
		{filepath.Join(path, ".git"), "gitdir: " + admin + "\n"},
		{filepath.Join(admin, "HEAD"), "0000000000000000000000000000000000000000\n"},
		{filepath.Join(admin, "commondir"), "../..\n"},
	}
	for _, d := range []string{admin, path} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		content := f.content
		if filepath.Base(f.name) == step {
			content = "" // killed between its open and its write
		}
		if err := os.WriteFile(f.name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if filepath.Base(f.name) == step {
			break
		}
	}
	return admin
}

// TestCleanupOfWorktreeKilledWritingItsGitFile: `git worktree add` killed
// after it opened the worktree's .git file and before it wrote it (seen in
// TestSpawnKilledAnyTime at load 10: `git worktree list` showed it
// "locked initializing" with a null HEAD) leaves an empty .git file, which
// git refuses ("invalid gitfile format"), so `git status` there fails.
// Nothing was checked out: WorkIn calls it half-made, not an error, and
// RemoveWorktree and DeleteBranch remove all of it.
func TestCleanupOfWorktreeKilledWritingItsGitFile(t *testing.T) {
	// each file git writes, killed between its open and its write; "all"
	// is killed after them all, before HEAD names the branch
	for _, step := range []string{"locked", "gitdir", ".git", "HEAD", "commondir", "all"} {
		t.Run(step, func(t *testing.T) {
			dir := gitstatetest.NewRepo(t)
			gitstatetest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
			s := openRepo(t, dir)
			path := filepath.Join(t.TempDir(), "c2")
			admin := halfMadeAt(t, dir, path, "codex/c2", step)
			if step == "locked" {
				// killed before it made the worktree's directory
				os.Remove(path)
			}
			ctx := context.Background()
			w, err := s.WorkIn(ctx, path, "codex/c2")
			if err != nil {
				t.Fatalf("WorkIn: %v", err)
			}
			if w.Exists && !w.HalfMade || w.Lost() {
				t.Fatalf("WorkIn = %+v, want a half-made worktree holding no work", w)
			}
			if err := s.RemoveWorktree(ctx, path); err != nil {
				t.Fatalf("remove: %v", err)
			}
			if err := s.DeleteBranch(ctx, "codex/c2"); err != nil {
				t.Fatalf("delete branch: %v", err)
			}
			if _, err := os.Stat(admin); err == nil {
				t.Errorf("the admin directory is still there")
			}
			if _, err := os.Stat(path); err == nil {
				t.Errorf("the worktree's directory is still there")
			}
			if out := gitstatetest.Git(t, dir, "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
				t.Errorf("worktrees left:\n%s", out)
			}
			if out, err := gitstatetest.GitErr(dir, "fsck", "--no-dangling"); err != nil {
				t.Errorf("git fsck: %v\n%s", err, out)
			}
		})
	}
}

// TestWorkInKeepsABrokenWorktreeWithFiles: a .git file git cannot read
// beside other files is not what a killed `git worktree add` leaves (it
// checks nothing out before the .git file is whole): WorkIn cannot tell
// what it holds and says so, and cleanup keeps it.
func TestWorkInKeepsABrokenWorktreeWithFiles(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	gitstatetest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
	s := openRepo(t, dir)
	path := filepath.Join(t.TempDir(), "c2")
	halfMadeAt(t, dir, path, "codex/c2", ".git")
	if err := os.WriteFile(filepath.Join(path, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := s.WorkIn(context.Background(), path, "codex/c2")
	if err == nil || w.HalfMade {
		t.Fatalf("WorkIn = %+v, %v; want an error, not a half-made worktree", w, err)
	}
}

// TestRemoveWorktreeHalfMadeUnderANumberedName: git names a worktree's
// admin directory after its path's last element, or <name>1, <name>2, ...
// when that is taken (another worktree of the same name elsewhere). A
// killed add of the path under such a name is unlocked and pruned too:
// one whose gitdir names the path at once, one that never wrote its
// gitdir once its lock is old enough not to be another add's under way
// (that of an instance named <name>1 itself, say). Another path's
// worktree, whole or half-made and named so, is left alone.
func TestRemoveWorktreeHalfMadeUnderANumberedName(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	gitstatetest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
	s := openRepo(t, dir)
	ctx := context.Background()
	// a worktree named c6 elsewhere holds worktrees/c6
	other := filepath.Join(t.TempDir(), "c6")
	if err := s.AddWorktree(ctx, other, "codex/other", "HEAD"); err != nil {
		t.Fatal(err)
	}
	wts := filepath.Join(dir, ".git", "worktrees")
	if _, err := os.Stat(filepath.Join(wts, "c6", "gitdir")); err != nil {
		t.Fatalf("the first worktree's admin directory: %v", err)
	}
	path := filepath.Join(t.TempDir(), "c6")
	halfMade := func(name, gitdir string, age time.Duration) string {
		t.Helper()
		admin := filepath.Join(wts, name)
		if err := os.MkdirAll(admin, 0o755); err != nil {
			t.Fatal(err)
		}
		lock := filepath.Join(admin, "locked")
		if err := os.WriteFile(lock, []byte("initializing"), 0o644); err != nil {
			t.Fatal(err)
		}
		if gitdir != "" {
			if err := os.WriteFile(filepath.Join(admin, "gitdir"), []byte(gitdir+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		then := time.Now().Add(-age)
		if err := os.Chtimes(lock, then, then); err != nil {
			t.Fatal(err)
		}
		return admin
	}
	mine := halfMade("c61", filepath.Join(path, ".git"), 0)                          // gitdir written: ours
	neverWrote := halfMade("c62", "", time.Minute)                                   // a killed add's, a minute ago
	underWay := halfMade("c63", "", 0)                                               // an add under way, or just killed
	theirs := halfMade("c64", filepath.Join(t.TempDir(), "c6", ".git"), time.Minute) // another path's
	notNumbered := halfMade("c6x", "", time.Minute)                                  // another name
	// git 2.48's worktree.useRelativePaths: the gitdir relative to the
	// admin directory's realpath
	relAdmin, relPath := realPath(t, filepath.Join(wts, "c65")), realPath(t, filepath.Dir(path))
	rel, err := filepath.Rel(relAdmin, filepath.Join(relPath, filepath.Base(path), ".git"))
	if err != nil {
		t.Fatal(err)
	}
	relative := halfMade("c65", rel, 0)
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveWorktree(ctx, path); err != nil {
		t.Fatalf("remove: %v", err)
	}
	for admin, kept := range map[string]bool{mine: false, neverWrote: false, underWay: true, theirs: true, notNumbered: true, relative: false} {
		if _, err := os.Stat(admin); (err == nil) != kept {
			t.Errorf("%s: there %v, want %v", filepath.Base(admin), err == nil, kept)
		}
	}
	if _, err := os.Stat(filepath.Join(other, ".git")); err != nil {
		t.Errorf("the other worktree c6: %v", err)
	}
	if out := gitstatetest.Git(t, dir, "worktree", "list", "--porcelain"); !strings.Contains(out, "worktree "+other+"\n") {
		t.Errorf("the other worktree is gone from git's list:\n%s", out)
	}
}

// realPath is path with its links resolved, made first if need be.
func realPath(t *testing.T, path string) string {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

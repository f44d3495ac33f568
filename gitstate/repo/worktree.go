package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/internal/gitcli"
)

// Worktrees and branches of the store's repository, for the agents git
// codex runs: each works in a linked worktree on its own branch. These run
// the git CLI (go-git cannot add worktrees) and take no state lock: they
// are work outside the state, done before or after a transaction records
// it.

// RefRescue is where work that cleanup would otherwise destroy is saved:
// refs/codex/rescue/<instance>/branch (the branch's commits) and
// refs/codex/rescue/<instance>/worktree (uncommitted changes, as a commit).
const RefRescue = "refs/codex/rescue"

// ErrBranchExists is returned by AddWorktree when the branch is taken.
var ErrBranchExists = errors.New("branch already exists")

// AddWorktree creates a worktree at path on a new branch that starts at
// from (any revision). Nothing is made if the branch exists or path is
// not empty.
func (r *Repo) AddWorktree(ctx context.Context, path, branch, from string) error {
	if r.BranchExists(ctx, branch) {
		return fmt.Errorf("repo: worktree %s: %s: %w", path, branch, ErrBranchExists)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("repo: worktree %s: %w", path, err)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", "--git-dir", r.gitDir, "worktree", "add", "--quiet", "-b", branch, path, from+"^{commit}")
	cmd.Env = gitcli.Env()
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("repo: git worktree add %s: %v: %s", path, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// BranchExists reports whether refs/heads/<branch> exists.
func (r *Repo) BranchExists(ctx context.Context, branch string) bool {
	return r.git(ctx, nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch) == nil
}

// RevParse resolves a revision to a full commit hash.
func (r *Repo) RevParse(ctx context.Context, rev string) (string, error) {
	var out bytes.Buffer
	if err := r.git(ctx, &out, "rev-parse", "--verify", "--quiet", rev+"^{commit}"); err != nil {
		return "", fmt.Errorf("repo: %q names no commit: %w", rev, gitstate.ErrNotFound)
	}
	return strings.TrimSpace(out.String()), nil
}

// WorktreeWork is what a worktree holds that removing it would lose.
type WorktreeWork struct {
	// Exists is false when the worktree's directory is gone.
	Exists bool
	// Dirty lists changed and untracked files (git status --porcelain),
	// ignored files aside.
	Dirty []string
	// Ignored lists the files and directories git ignores (paths
	// relative to the worktree, a directory with a trailing "/"): not
	// work git would commit, yet a .env or local notes cannot be rebuilt.
	Ignored []string
	// Unmerged are the branch's commits that no other ref reaches
	// (newest first): deleting the branch would lose them.
	Unmerged []string
	// HalfMade says `git worktree add` never finished (it was killed):
	// git still has the worktree locked "initializing", so nothing was
	// checked out for anyone to work in.
	HalfMade bool
}

// Lost reports whether removing the worktree and its branch would lose
// work.
func (w WorktreeWork) Lost() bool { return len(w.Dirty) > 0 || len(w.Unmerged) > 0 }

// WorkIn reports what the worktree at path and its branch hold that no
// other ref has. A missing worktree is not an error (Exists is false); a
// missing branch has no commits.
func (r *Repo) WorkIn(ctx context.Context, path, branch string) (WorktreeWork, error) {
	var w WorktreeWork
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		w.Exists = true
		w.HalfMade = halfMade(path)
	}
	if w.Exists && !w.HalfMade {
		var out bytes.Buffer
		cmd := exec.CommandContext(ctx, "git", "-C", path, "status", "--porcelain", "--untracked-files=all", "--ignored=matching")
		cmd.Env = gitcli.Env()
		cmd.Stdout = &out
		if err := cmd.Run(); err != nil {
			return w, fmt.Errorf("repo: status of %s: %w", path, err)
		}
		for _, line := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
			switch {
			case strings.HasPrefix(line, "!! "):
				w.Ignored = append(w.Ignored, unquotePath(strings.TrimPrefix(line, "!! ")))
			case line != "":
				w.Dirty = append(w.Dirty, line)
			}
		}
	}
	if branch != "" && r.BranchExists(ctx, branch) {
		ref := "refs/heads/" + branch
		var out bytes.Buffer
		// reachable from no other branch, tag or remote-tracking ref
		// (--exclude names a branch without refs/heads/ for --branches)
		err := r.git(ctx, &out, "rev-list", ref, "--not", "--exclude="+branch, "--branches", "--tags", "--remotes")
		if err != nil {
			return w, fmt.Errorf("repo: commits of %s: %w", branch, err)
		}
		w.Unmerged = strings.Fields(out.String())
	}
	return w, nil
}

// unquotePath reads a path as git status prints it: C-quoted when it holds
// special characters.
func unquotePath(p string) string {
	if u, ok := gitcli.UnquoteC(p); ok {
		return u
	}
	return p
}

// halfMade reports whether the worktree at path is one `git worktree add`
// began and never finished: an empty directory without its .git file yet,
// one holding nothing but a .git file git never wrote (killed between
// opening it and writing it: empty, which git refuses as "invalid gitfile
// format", so `git status` there fails), or one whose admin directory
// still holds git's "initializing" lock. git writes the .git file in one
// write, so it is either empty or whole; nothing is checked out before
// it is whole, so none of these holds work.
func halfMade(path string) bool {
	dotgit := filepath.Join(path, ".git")
	fi, err := os.Lstat(dotgit)
	if os.IsNotExist(err) {
		// killed before it wrote even the .git file: an empty directory
		entries, err := os.ReadDir(path)
		return err == nil && len(entries) == 0
	}
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	content, err := os.ReadFile(dotgit)
	if err != nil {
		return false
	}
	admin, ok := gitcli.ParseGitFile(dotgit, content)
	if !ok {
		entries, err := os.ReadDir(path)
		return err == nil && len(entries) == 1
	}
	b, err := os.ReadFile(filepath.Join(admin, "locked"))
	return err == nil && strings.TrimSpace(string(b)) == "initializing"
}

// Rescue saves the work of a worktree and its branch under
// refs/codex/rescue/<name>/: the branch head as .../branch, uncommitted
// changes (tracked and untracked, ignored files aside) as a commit on top
// of the worktree's HEAD as .../worktree. It returns the refs it wrote.
func (r *Repo) Rescue(ctx context.Context, name, path, branch string) ([]string, error) {
	w, err := r.WorkIn(ctx, path, branch)
	if err != nil {
		return nil, err
	}
	var refs []string
	if len(w.Unmerged) > 0 {
		ref := RefRescue + "/" + name + "/branch"
		if err := r.git(ctx, nil, "update-ref", ref, "refs/heads/"+branch); err != nil {
			return refs, fmt.Errorf("repo: rescue %s: %w", branch, err)
		}
		refs = append(refs, ref)
	}
	if len(w.Dirty) > 0 {
		commit, err := r.snapshotWorktree(ctx, path, "git codex rescued the uncommitted work of "+name)
		if err != nil {
			return refs, err
		}
		ref := RefRescue + "/" + name + "/worktree"
		if err := r.git(ctx, nil, "update-ref", ref, commit); err != nil {
			return refs, fmt.Errorf("repo: rescue %s: %w", path, err)
		}
		refs = append(refs, ref)
	}
	return refs, nil
}

// snapshotWorktree commits the worktree's files as they are (through a
// temporary index, so the worktree's own index and files stay untouched)
// on top of its HEAD, and returns the commit.
func (r *Repo) snapshotWorktree(ctx context.Context, path, message string) (string, error) {
	index, err := os.CreateTemp("", "codex-index-*")
	if err != nil {
		return "", err
	}
	index.Close()
	defer os.Remove(index.Name())
	head, err := r.gitIn(ctx, path, index.Name(), nil, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return "", err
	}
	for _, args := range [][]string{{"read-tree", "HEAD"}, {"add", "-A", "."}} {
		if _, err := r.gitIn(ctx, path, index.Name(), nil, args...); err != nil {
			return "", err
		}
	}
	tree, err := r.gitIn(ctx, path, index.Name(), nil, "write-tree")
	if err != nil {
		return "", err
	}
	return r.gitIn(ctx, path, index.Name(), nil, "commit-tree", tree, "-p", head, "-m", message)
}

// RemoveWorktree removes the worktree at path (forcefully: callers check
// WorkIn or Rescue first) and prunes git's record of it, so a worktree
// deleted by hand is forgotten too.
func (r *Repo) RemoveWorktree(ctx context.Context, path string) error {
	// a half-made worktree stays locked "initializing", and git neither
	// removes nor prunes a locked one
	r.git(ctx, nil, "worktree", "unlock", path)
	r.unlockHalfMade(path)
	if _, err := os.Stat(path); err == nil {
		var stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, "git", "--git-dir", r.gitDir, "worktree", "remove", "--force", "--force", path)
		cmd.Env = gitcli.Env()
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			// not a worktree git knows (a half-made one): remove the directory
			if rmErr := os.RemoveAll(path); rmErr != nil {
				return fmt.Errorf("repo: remove worktree %s: %v: %s", path, err, strings.TrimSpace(stderr.String()))
			}
		}
	}
	return r.git(ctx, nil, "worktree", "prune")
}

// unlockHalfMade removes the "initializing" lock of the admin directory a
// killed `git worktree add` left for path before it wrote the gitdir file
// that `git worktree unlock <path>` finds it by: git makes
// "<common>/worktrees/<name>" (named after the path's last element, or,
// when that is taken, the first of <name>1, <name>2, ... that is free:
// builtin/worktree.c) and locks it first, then writes the rest. Each
// file is opened, then written, so a kill in between leaves it empty: an
// empty gitdir file is one never written, and an empty lock is git's
// "initializing" never written when no gitdir follows it (`git worktree
// lock` locks only a worktree git knows, by its gitdir). Only a lock of
// that kind whose gitdir file is missing, empty or names path is removed;
// then `git worktree prune` removes the directory (its gitdir is missing
// or leads nowhere). The caller knows that no spawn of that worktree is
// still running.
func (r *Repo) unlockHalfMade(path string) {
	dir := filepath.Join(r.gitDir, "worktrees")
	base := filepath.Base(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	ours := worktreeGitdirs(path)
	for _, e := range entries {
		n, ok := strings.CutPrefix(e.Name(), base)
		if !ok || !e.IsDir() || strings.Trim(n, "0123456789") != "" {
			continue
		}
		admin := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(filepath.Join(admin, "locked"))
		if err != nil {
			continue
		}
		lock := strings.TrimSpace(string(b))
		if lock != "initializing" && lock != "" {
			continue
		}
		g, err := os.ReadFile(filepath.Join(admin, "gitdir"))
		switch gitdir := strings.TrimSpace(string(g)); {
		case errors.Is(err, fs.ErrNotExist) || err == nil && gitdir == "":
			// git never wrote it: ours if named after path alone; one of
			// <name>N may be another path's (another instance's, named
			// <name>N itself), whose add writes its gitdir a moment after
			// its lock: one made that recently is left alone
			if n != "" && !lockedBefore(admin, time.Now().Add(-halfMadeAge)) {
				continue
			}
		case err != nil || lock == "":
			continue
		case !ours[adminGitdir(admin, gitdir)]:
			continue // another worktree's
		}
		os.Remove(filepath.Join(admin, "locked"))
	}
}

// halfMadeAge is how old a lock of an admin directory named <name>N with
// no gitdir is before unlockHalfMade takes it for a killed add's: git
// writes the gitdir right after the lock.
const halfMadeAge = 10 * time.Second

// lockedBefore reports whether admin's lock was written before t.
func lockedBefore(admin string, t time.Time) bool {
	fi, err := os.Stat(filepath.Join(admin, "locked"))
	return err == nil && fi.ModTime().Before(t)
}

// adminGitdir is the path an admin directory's gitdir file names:
// absolute, or relative to the admin directory (git 2.48's
// worktree.useRelativePaths).
func adminGitdir(admin, gitdir string) string {
	if !filepath.IsAbs(gitdir) {
		// relative to the admin directory's realpath, as git made it
		if real, err := filepath.EvalSymlinks(admin); err == nil {
			admin = real
		}
		gitdir = filepath.Join(admin, gitdir)
	}
	return filepath.Clean(gitdir)
}

// worktreeGitdirs are the ways an admin directory's gitdir file may name
// path's .git: as given, and with the links on the way resolved, as git
// writes it (its realpath; say /private/var/... for /var/... on macOS).
func worktreeGitdirs(path string) map[string]bool {
	out := map[string]bool{filepath.Join(path, ".git"): true}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		out[filepath.Join(real, ".git")] = true
	} else if real, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		out[filepath.Join(real, filepath.Base(path), ".git")] = true
	}
	return out
}

// DeleteBranch deletes refs/heads/<branch>; a missing branch is not an
// error.
func (r *Repo) DeleteBranch(ctx context.Context, branch string) error {
	if !r.BranchExists(ctx, branch) {
		return nil
	}
	if err := r.git(ctx, nil, "branch", "-D", "--quiet", branch); err != nil {
		return fmt.Errorf("repo: delete branch %s: %w", branch, err)
	}
	return nil
}

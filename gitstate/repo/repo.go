// Package repo is the code repository that git codex's agents work in,
// as the tools need it: worktrees and branches for each agent, the files
// of a branch, feedback committed on a coder's branch and attached as git
// notes, branches pushed for pull requests, and the work a worktree holds
// before cleanup removes it. It runs the git CLI (go-git cannot add
// worktrees) and touches no state: it is the work outside git that a
// transaction records before or after (gitstate is the state itself).
package repo

import (
	"context"
	"io"
	"os"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/internal/gitcli"
)

// Repo is one repository's porcelain. It holds no open files and is safe
// for concurrent use: git's own locks order what its commands change.
type Repo struct {
	workDir   string // top of the working tree, "" for bare repos
	gitDir    string // the common git dir, shared by all worktrees
	committer gitstate.Signature
}

// Options tune a Repo. The zero value is what production uses.
type Options struct {
	// Committer names the committer of the commits Repo makes (feedback,
	// notes, rescued work); zero means "git codex", as gitstate's.
	Committer gitstate.Signature
}

// Open returns the porcelain of the repository whose common git dir is
// gitDir, opened from the working tree workDir ("" for a bare repository):
// a Store's GitDir and WorkDir.
func Open(gitDir, workDir string, opts Options) *Repo {
	if opts.Committer.Name == "" {
		opts.Committer = gitstate.Signature{Name: "git codex", Email: "git-codex@localhost"}
	}
	return &Repo{workDir: workDir, gitDir: gitDir, committer: opts.Committer}
}

// Of is the porcelain of the store's repository.
func Of(st *gitstate.Store) *Repo { return Open(st.GitDir(), st.WorkDir(), Options{}) }

// WorkDir is the top of the working tree the repository was opened from
// ("" for a bare repository).
func (r *Repo) WorkDir() string { return r.workDir }

// GitDir is the git directory shared by all worktrees (git's common dir).
func (r *Repo) GitDir() string { return r.gitDir }

// git runs the git CLI on the repository. stdout, if not nil, receives the
// output; a failure is a *gitcli.Error carrying git's stderr.
func (r *Repo) git(ctx context.Context, stdout io.Writer, args ...string) error {
	return gitcli.Run(ctx, r.gitCwd(), r.gitDir, stdout, nil, args...)
}

// gitCwd is where git commands run: the work tree the repository was
// opened in, or the git directory once that work tree is gone (a
// reviewer's process removes its own worktree, then prunes and deletes its
// branch).
func (r *Repo) gitCwd() string {
	if r.workDir == "" {
		return ""
	}
	if _, err := os.Stat(r.workDir); err != nil {
		return r.gitDir
	}
	return r.workDir
}

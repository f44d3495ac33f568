package tools

import (
	"context"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/repo"
)

// CodeRepo is the code repository as the steps after a call change it
// (Followup.Repo): agents' worktrees and branches, the files of a branch,
// feedback commits and notes, pushes, and what cleanup rescues. Handlers
// see only its quick reads (Repo): work outside git never runs under the
// writer lock.
type CodeRepo interface {
	Repo
	AddWorktree(ctx context.Context, path, branch, from string) error
	WorkIn(ctx context.Context, path, branch string) (repo.WorktreeWork, error)
	Rescue(ctx context.Context, name, path, branch string) ([]string, error)
	RemoveWorktree(ctx context.Context, path string) error
	DeleteBranch(ctx context.Context, branch string) error
	CreateBranch(ctx context.Context, branch, from string) (made bool, err error)
	StaleGitLocks(ctx context.Context, worktree, branch string) []string
	RemoveGitLocks(paths []string) error
	IgnoredDir(name string) string
	SaveIgnored(ctx context.Context, name, worktree string, paths []string) (string, error)
	ReadFileAt(ctx context.Context, rev, path string) ([]byte, error)
	PushBranch(ctx context.Context, remote, branch string) (pushed bool, err error)
	CommitFile(ctx context.Context, worktree, branch, file string, content []byte, message string, author gitstate.Signature) (string, error)
	RemoveFile(ctx context.Context, branch, file, message string, author gitstate.Signature) (string, error)
	AppendNoteOnce(ctx context.Context, ref, commit, text, marker string) (bool, error)
	DiffStat(ctx context.Context, base, head string) (string, error)
}

// storeRepo is the CodeRepo of a store's repository: package repo's
// porcelain, and the store's work marks (kept in the state's directory,
// with its shared-repository modes).
type storeRepo struct {
	*repo.Repo
	marks *gitstate.Store
}

var _ CodeRepo = storeRepo{}

// CodeRepoOf is the code repository st lives in.
func CodeRepoOf(st *gitstate.Store) CodeRepo { return storeRepo{Repo: repo.Of(st), marks: st} }

func (r storeRepo) HoldWork(name string) (func(), error) { return r.marks.HoldWork(name) }

func (r storeRepo) WorkHeld(name string) bool { return r.marks.WorkHeld(name) }

func (r storeRepo) MachineID() (string, error) { return r.marks.MachineID() }

// RepoOf is the code repository st lives in, for adapters that hand it to
// the tools' helpers (the watcher's reaping).
func RepoOf(st *gitstate.Store) Repo { return CodeRepoOf(st) }

package tools

import (
	"context"

	"github.com/gitcodex/git-codex/tools/prompts"

	"github.com/gitcodex/git-codex/tmux"
)

// Env is the world outside the state that tools reach: the tmux server
// agents run on (and, as they come, GitHub and agent CLIs). It is
// built once, where the registry is built (builtin.Registry().WithEnv), so tests
// substitute real but isolated parts: a private tmux socket.
// Worktrees and branches are the store's repository's (CodeRepo).
type Env struct {
	// Tmux runs the agents' sessions. The zero value is the tmux server
	// of the calling environment (TMUX_TMPDIR isolates it).
	Tmux tmux.Runner
	// Prompts keeps the prompt registry's catalogs between calls (a
	// long-running server sets one, so a search index is built once per
	// load); nil means each call loads what it reads.
	Prompts *prompts.Cache
	// GitHub connects to the forge for pull requests and issues (package
	// github's Open over go-gh); nil means no forge is reachable and every
	// GitHub call fails with GITHUB_UNAVAILABLE.
	GitHub GitHubOpener
}

// Dirs is where a repository is: its shared git directory and the work
// tree it was opened from (a *gitstate.Store has them, and so has a Repo).
type Dirs interface {
	// WorkDir is the top of the working tree the store was opened from.
	WorkDir() string
	// GitDir is the git directory shared by all worktrees.
	GitDir() string
}

// Repo is what handlers may read of the code repository, quickly and
// without changing it: package repo's porcelain, with the store's work
// marks (CodeRepoOf).
type Repo interface {
	Dirs
	// RevParse resolves a revision to a full commit hash.
	RevParse(ctx context.Context, rev string) (string, error)
	// BranchExists reports whether refs/heads/<branch> exists.
	BranchExists(ctx context.Context, branch string) bool
	// HoldWork marks that this process is doing work outside git for a
	// record until release (gitstate's work marks); WorkHeld reports
	// whether a live process holds one.
	HoldWork(name string) (release func(), err error)
	WorkHeld(name string) bool
	// MachineID is this repository's machine id (made if it has none):
	// spawn records it on an instance, and reap and cleanup judge only
	// the instances that carry it.
	MachineID() (string, error)
}

// WithEnv returns a copy of the registry whose tools reach the outside
// world through env.
func (r *Registry) WithEnv(env Env) *Registry {
	out := *r
	out.env = env
	return &out
}

// Env is the environment the registry's tools use.
func (r *Registry) Env() Env { return r.env }

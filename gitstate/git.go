package gitstate

import (
	"context"
	"io"
	"os"

	"github.com/gitcodex/git-codex/gitstate/internal/gitcli"
)

// git runs the git CLI on the repository, for what go-git cannot do
// (merge-base, fetch, push, notes). stdout, if not nil, receives the
// output; a failure carries git's stderr.
func (s *Store) git(ctx context.Context, stdout io.Writer, args ...string) error {
	return s.gitTo(ctx, stdout, nil, args...)
}

// gitTo is git with its stderr also copied to progress (if not nil).
func (s *Store) gitTo(ctx context.Context, stdout, progress io.Writer, args ...string) error {
	return gitcli.Run(ctx, s.gitCwd(), s.commonDir, stdout, progress, args...)
}

// gitError is a failed git command with what it said.
type gitError = gitcli.Error

// gitEnv is the environment of the git commands the store runs: git's
// own messages, untranslated, since the store reads some of them.
func gitEnv() []string { return gitcli.Env() }

// gitCwd is where git commands run: the work tree the store was opened
// in, or the git directory once that work tree is gone (a reviewer's
// process removes its own worktree, then prunes and deletes its branch).
func (s *Store) gitCwd() string {
	if s.workDir == "" {
		return ""
	}
	if _, err := os.Stat(s.workDir); err != nil {
		return s.commonDir
	}
	return s.workDir
}

package gitstate

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// git runs the git CLI on the repository, for what go-git cannot do
// (merge-base, fetch, push, notes). stdout, if not nil, receives the
// output; a failure carries git's stderr.
func (s *Store) git(ctx context.Context, stdout io.Writer, args ...string) error {
	return s.gitTo(ctx, stdout, nil, args...)
}

// gitTo is git with its stderr also copied to progress (if not nil).
func (s *Store) gitTo(ctx context.Context, stdout, progress io.Writer, args ...string) error {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir", s.commonDir}, args...)...)
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	// git codex reads git's messages (push refusals, ref lock failures):
	// they must be git's own, not a translation.
	cmd.Env = gitEnv()
	if progress != nil {
		cmd.Stderr = io.MultiWriter(&stderr, progress)
	}
	cmd.Dir = s.gitCwd()
	if err := cmd.Run(); err != nil {
		return &gitError{args: args, stderr: strings.TrimSpace(stderr.String()), err: err}
	}
	return nil
}

// gitError is a failed git command with what it said.
type gitError struct {
	args   []string
	stderr string
	err    error
}

func (e *gitError) Error() string {
	msg := fmt.Sprintf("git %s: %v", strings.Join(e.args, " "), e.err)
	if e.stderr != "" {
		msg += ": " + e.stderr
	}
	return msg
}

func (e *gitError) Unwrap() error { return e.err }

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

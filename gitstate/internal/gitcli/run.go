package gitcli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// Env is the environment of the git commands git codex runs: git's own
// messages, untranslated, since callers read some of them (push refusals,
// ref lock failures).
func Env() []string { return append(os.Environ(), "LC_ALL=C") }

// Run runs `git --git-dir gitDir args...` in dir ("" for the current
// directory). stdout, if not nil, receives the output; progress, if not
// nil, gets a copy of stderr. A failure is an *Error carrying git's stderr.
func Run(ctx context.Context, dir, gitDir string, stdout, progress io.Writer, args ...string) error {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir", gitDir}, args...)...)
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	cmd.Env = Env()
	if progress != nil {
		cmd.Stderr = io.MultiWriter(&stderr, progress)
	}
	cmd.Dir = dir
	if err := cmd.Run(); err != nil {
		return &Error{Args: args, Stderr: strings.TrimSpace(stderr.String()), Err: err}
	}
	return nil
}

// LostFanOutRace reports whether git's stderr says that a command writing
// a loose object lost a race with git's own maintenance: git creates the
// object's fan-out directory (objects/ab/) when it is missing and tries
// once more to create its temporary file there (create_tmpfile in
// object-file.c), and `git repack -d` or `git prune-packed`, which the
// store's background repack and git gc run, removed the directory, empty,
// in between. Nothing was written; the same command run again writes the
// object. (TestScripts/github_reviews failed so in CI: "git commit-tree:
// error: unable to create temporary file: No such file or directory".)
// git's messages are read untranslated (Env).
func LostFanOutRace(stderr string) bool {
	return strings.Contains(stderr, "unable to create temporary file: No such file or directory")
}

// Error is a failed git command with what it said.
type Error struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("git %s: %v", strings.Join(e.Args, " "), e.Err)
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

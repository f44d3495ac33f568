package gitstate

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// RefusedError is git's refusal of a repository, in git's words: it is
// not safe to use (safe.directory: owned by someone else), of a format or
// with an extension git does not know, or its git directory is gone (a
// linked worktree whose main repository moved).
type RefusedError struct {
	Dir    string
	Reason string // what git said, "fatal: " removed
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("git refuses the repository at %s: %s", e.Dir, e.Reason)
}

// Is makes a refusal in which git says the directory is no repository
// ErrNotRepository, and every other one ErrRepositoryRefused.
func (e *RefusedError) Is(target error) bool {
	if target == ErrNotRepository {
		return strings.HasPrefix(e.Reason, "not a git repository")
	}
	return target == ErrRepositoryRefused
}

// discoveryEnv are the variables that change where git finds a repository
// or what it makes of it; with any of them set, git itself is asked.
var discoveryEnv = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
	"GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
	"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_TEST_ASSUME_DIFFERENT_OWNER",
}

// discover finds the repository that dir is in exactly as git finds it:
// the top of its working tree ("" when there is none), its git directory
// and its common directory, or git's refusal. Starting git costs
// milliseconds on every command, so the common case is read from the
// files: no variable that changes discovery set, a ".git" directory or
// gitfile found walking up whose git directory is whole, everything owned
// by the user running git codex, and a format and extensions git 2.39
// knows. Anything else is git's to decide (`git rev-parse`), and where git
// refuses, so does git codex, with git's reason.
func discover(dir string, getenv func(string) string) (work, gitDir, common string, err error) {
	fast := true
	for _, k := range discoveryEnv {
		if getenv(k) != "" {
			fast = false
		}
	}
	if fast {
		work, gitDir, gitFile, err := findGitDir(dir)
		if errors.Is(err, ErrNotRepository) {
			return "", "", "", err
		}
		if err == nil {
			common, err = commonDirOf(gitDir)
		}
		if err == nil && wholeGitDir(gitDir, common) && ownedByUs(work, gitDir, gitFile) && plainFormat(common) {
			return work, gitDir, common, nil
		}
	}
	return gitDiscover(dir)
}

// gitDiscover asks git where the repository of dir is.
func gitDiscover(dir string) (work, gitDir, common string, err error) {
	cmd := exec.Command("git", "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir", "--is-bare-repository", "--show-cdup")
	cmd.Dir = dir
	cmd.Env = gitEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		reason := strings.TrimSpace(stderr.String())
		if reason == "" {
			return "", "", "", fmt.Errorf("gitstate: git rev-parse in %s: %w", dir, err)
		}
		reason = strings.Join(strings.Fields(strings.TrimPrefix(reason, "fatal: ")), " ")
		if strings.HasPrefix(reason, "not a git repository (or any") {
			return "", "", "", fmt.Errorf("gitstate: %s: %w", dir, ErrNotRepository)
		}
		return "", "", "", &RefusedError{Dir: dir, Reason: reason}
	}
	lines := strings.Split(string(out), "\n")
	if len(lines) < 4 {
		return "", "", "", fmt.Errorf("gitstate: git rev-parse in %s said %q", dir, out)
	}
	gitDir, common = lines[0], lines[1]
	if len(lines) >= 5 && lines[2] != "true" {
		// a working tree: --show-cdup leads from dir to its top
		work = filepath.Clean(filepath.Join(dir, lines[3]))
	}
	return work, gitDir, common, nil
}

// wholeGitDir reports whether gitDir and common look like a git directory
// to git: HEAD in the git directory, objects and refs in the common one.
// A linked worktree whose main repository moved fails here.
func wholeGitDir(gitDir, common string) bool {
	for _, p := range []string{filepath.Join(gitDir, "HEAD"), filepath.Join(common, "objects"), filepath.Join(common, "refs")} {
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	return true
}

// ownedByUs is the common case of git's safe.directory check
// (ensure_valid_ownership): the working tree, the git directory and the
// gitfile, where there are ones, belong to the user running git codex.
// Otherwise git decides (safe.directory, SUDO_UID).
func ownedByUs(paths ...string) bool {
	uid := uint32(os.Geteuid())
	for _, p := range paths {
		if p == "" {
			continue
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil || st.Uid != uid {
			return false
		}
	}
	return true
}

// knownExtensions are the repository extensions git 2.39 knows.
var knownExtensions = map[string]bool{
	"noop": true, "noop-v1": true, "preciousobjects": true, "partialclone": true,
	"worktreeconfig": true, "objectformat": true,
}

// plainFormat reports whether the repository's format is one git accepts
// without question: core.repositoryformatversion 0 or 1, and only
// extensions git knows. A config that does not parse is git's to judge.
func plainFormat(common string) bool {
	b, err := os.ReadFile(filepath.Join(common, "config"))
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	cfg, err := gitrepo.ParseConfig(b)
	if err != nil {
		return false
	}
	if v, ok := ConfigValue(cfg, "core", "", "repositoryformatversion"); ok && v != "0" && v != "1" {
		return false
	}
	for _, e := range cfg {
		if e.Section == "extensions" && !knownExtensions[e.Key] {
			return false
		}
	}
	return true
}

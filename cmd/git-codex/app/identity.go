package app

import (
	"os/exec"
	"strings"

	"github.com/gitcodex/git-codex/gitstate"
)

// userEmail returns git's user.email for the repository whose common git
// dir is gitDir, as `git config user.email` would. Starting git costs ~6 ms
// on every command a person runs, so the config files are read directly
// when that is certain to give git's answer: no include or includeIf
// sections, no per-worktree config, no -c or GIT_CONFIG_COUNT overrides.
// Anything else asks git itself.
func (e *env) userEmail(gitDir string) string {
	if email, ok := readUserEmail(gitDir, e.getenv); ok {
		return email
	}
	cmd := exec.Command("git", "config", "user.email")
	cmd.Dir = e.dir
	out, _ := cmd.Output()
	return strings.TrimSpace(string(out))
}

// readUserEmail reads user.email from git's config files, lowest precedence
// first: system, global (XDG, then ~/.gitconfig), repository. ok is false
// when the answer might differ from git's (gitstate.ReadConfigFiles).
func readUserEmail(gitDir string, getenv func(string) string) (email string, ok bool) {
	entries, ok := gitstate.ReadConfigFiles(gitDir, getenv)
	if !ok {
		return "", false
	}
	email, _ = gitstate.ConfigValue(entries, "user", "", "email")
	return strings.TrimSpace(email), true
}

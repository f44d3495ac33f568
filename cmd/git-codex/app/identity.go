package app

import (
	"os"
	"os/exec"
	"path/filepath"
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
// when the answer might differ from git's.
func readUserEmail(gitDir string, getenv func(string) string) (email string, ok bool) {
	if getenv("GIT_CONFIG_PARAMETERS") != "" || getenv("GIT_CONFIG_COUNT") != "" || getenv("GIT_CONFIG") != "" {
		return "", false
	}
	var files []string
	if getenv("GIT_CONFIG_NOSYSTEM") == "" {
		files = append(files, or(getenv("GIT_CONFIG_SYSTEM"), "/etc/gitconfig"))
	}
	if global := getenv("GIT_CONFIG_GLOBAL"); global != "" {
		files = append(files, global)
	} else {
		home := getenv("HOME")
		xdg := getenv("XDG_CONFIG_HOME")
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		if xdg != "" {
			files = append(files, filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			files = append(files, filepath.Join(home, ".gitconfig"))
		}
	}
	files = append(files, filepath.Join(gitDir, "config"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if os.IsNotExist(err) || (err == nil && len(b) == 0) {
			continue
		}
		if err != nil {
			return "", false
		}
		entries, err := gitstate.ParseConfig(b)
		if err != nil {
			return "", false
		}
		for _, e := range entries {
			switch {
			case e.Section == "include" || e.Section == "includeif":
				return "", false
			case e.Section == "extensions" && !e.HasSubsection && e.Key == "worktreeconfig":
				return "", false
			case e.Section == "user" && !e.HasSubsection && e.Key == "email":
				email = e.Value
			}
		}
	}
	return strings.TrimSpace(email), true
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

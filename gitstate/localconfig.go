package gitstate

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// ReadConfigFiles reads the variables of git's config files for the
// repository whose common git dir is gitDir, lowest precedence first
// (system, global: XDG then ~/.gitconfig, the repository's own), as `git
// config --list` would list them, without starting git (~6 ms a run). ok is
// false when the answer might differ from git's: include or includeIf
// sections, per-worktree config, -c or GIT_CONFIG_* overrides, a file that
// cannot be read or parsed. Callers then ask git.
func ReadConfigFiles(gitDir string, getenv func(string) string) (entries []ConfigEntry, ok bool) {
	if getenv("GIT_CONFIG_PARAMETERS") != "" || getenv("GIT_CONFIG_COUNT") != "" || getenv("GIT_CONFIG") != "" {
		return nil, false
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
		if errors.Is(err, os.ErrNotExist) || (err == nil && len(b) == 0) {
			continue
		}
		if err != nil {
			return nil, false
		}
		parsed, err := gitrepo.ParseConfig(b)
		if err != nil {
			return nil, false
		}
		for _, e := range parsed {
			switch {
			case e.Section == "include" || e.Section == "includeif":
				return nil, false
			case e.Section == "extensions" && !e.HasSubsection && e.Key == "worktreeconfig":
				return nil, false
			}
		}
		entries = append(entries, parsed...)
	}
	return entries, true
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// GitConfig is git's configuration for the store's repository, every
// level (system, global, the repository's, overrides), lowest precedence
// first, so that the last value of a name wins: read from the files when
// that is certain to give git's answer (ReadConfigFiles), else from `git
// config --list`.
func (s *Store) GitConfig() ([]ConfigEntry, error) {
	if entries, ok := ReadConfigFiles(s.commonDir, os.Getenv); ok {
		return entries, nil
	}
	var out bytes.Buffer
	if err := s.git(context.Background(), &out, "config", "-z", "--list"); err != nil {
		return nil, err
	}
	return parseConfigList(out.Bytes()), nil
}

// parseConfigList reads `git config -z --list`: "name\nvalue" records
// ended by NUL, or "name" alone for a key written without "=".
func parseConfigList(b []byte) []ConfigEntry {
	var entries []ConfigEntry
	for _, rec := range bytes.Split(b, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		name, value, hasValue := strings.Cut(string(rec), "\n")
		var e ConfigEntry
		first, last := strings.Index(name, "."), strings.LastIndex(name, ".")
		switch {
		case first < 0:
			e.Key = strings.ToLower(name)
		case first == last:
			e.Section, e.Key = strings.ToLower(name[:first]), strings.ToLower(name[last+1:])
		default:
			e.Section, e.Subsection, e.HasSubsection, e.Key = strings.ToLower(name[:first]), name[first+1:last], true, strings.ToLower(name[last+1:])
		}
		e.Value, e.Bare = value, !hasValue
		entries = append(entries, e)
	}
	return entries
}

// SetGitConfig sets name to value in the repository's own config file
// (`git config --local`), which is never pushed or fetched.
func (s *Store) SetGitConfig(ctx context.Context, name, value string) error {
	return s.git(ctx, nil, "config", "--local", "--replace-all", name, value)
}

// UnsetGitConfig removes name from the repository's own config file; a
// name that is not set there is not an error.
func (s *Store) UnsetGitConfig(ctx context.Context, name string) error {
	err := s.git(ctx, nil, "config", "--local", "--unset-all", name)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 5 { // not set
		return nil
	}
	return err
}

// GitConfig is the repository's git configuration (Store.GitConfig):
// this machine's, not the state's.
func (sn *Snapshot) GitConfig() ([]ConfigEntry, error) { return sn.s.GitConfig() }

// GitConfig is the repository's git configuration (Store.GitConfig).
func (tx *Tx) GitConfig() ([]ConfigEntry, error) { return tx.base.GitConfig() }

package gitcli

import (
	"path/filepath"
	"strings"
)

// ParseGitFile reads the content of the ".git" file at path that a linked
// worktree or a submodule has instead of a directory ("gitdir: <dir>"),
// and returns the git directory it names, made absolute against path's
// directory; ok is false when content is not such a file.
func ParseGitFile(path string, content []byte) (gitDir string, ok bool) {
	line := strings.TrimSpace(string(content))
	target, ok := strings.CutPrefix(line, "gitdir: ")
	if !ok {
		return "", false
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(path), target)
	}
	return filepath.Clean(target), true
}

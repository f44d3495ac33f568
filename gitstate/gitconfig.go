package gitstate

import "github.com/gitcodex/git-codex/gitstate/internal/gitrepo"

// ConfigEntry is one variable of git's configuration (GitConfig).
type ConfigEntry = gitrepo.ConfigEntry

// ConfigValue returns the last value of section.key (subsection "" for
// none) among entries, as git does when a key is set more than once,
// "true" for a bare key; ok is false if the key is not set. It is the one
// reading of git's configuration gitstate exports (the CLI reads
// user.email with it); the parser itself is gitrepo's.
func ConfigValue(entries []ConfigEntry, section, subsection, key string) (value string, ok bool) {
	return gitrepo.ConfigValue(entries, section, subsection, key)
}

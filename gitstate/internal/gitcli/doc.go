// Package gitcli runs the git CLI the way git codex needs it (git's own
// messages, untranslated, since callers read some of them) and reads what
// git prints and writes for it: C-quoted paths, ".git" files. The store
// (gitstate) and the code repository's porcelain (gitstate/repo) both run
// git; this is the one place that says how.
package gitcli

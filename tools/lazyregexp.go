package tools

import (
	"regexp"
	"sync"
)

// lazyRE is a regular expression compiled on first use. Every git codex
// process runs one command, yet package-level regexps were all compiled at
// start: the bounded repetitions of the id and name patterns ({0,63},
// {16}) cost ~3 ms of every process's start, measured with
// GODEBUG=inittrace=1.
type lazyRE struct {
	re func() *regexp.Regexp
}

// LazyRegexp returns pattern compiled on first use; it panics then, as
// regexp.MustCompile would at start, if the pattern is invalid.
func LazyRegexp(pattern string) *lazyRE {
	return &lazyRE{re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })}
}

// MatchString reports whether s matches.
func (l *lazyRE) MatchString(s string) bool { return l.re().MatchString(s) }

// FindString returns the leftmost match in s, or "".
func (l *lazyRE) FindString(s string) string { return l.re().FindString(s) }

// ReplaceAllString returns s with every match replaced by repl.
func (l *lazyRE) ReplaceAllString(s, repl string) string { return l.re().ReplaceAllString(s, repl) }

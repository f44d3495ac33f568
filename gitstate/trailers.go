package gitstate

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Trailer keys of state commits. Every key a machine reads from a commit
// message is declared here, and parseMessage is the one parser for them.
const (
	TrailerTool      = "Codex-Tool"       // the tool (or command) that made the commit
	TrailerActor     = "Codex-Actor"      // the caller's id
	TrailerActorType = "Codex-Actor-Type" // the caller's agent type
	TrailerResult    = "Codex-Result"     // "ok" on success
	TrailerError     = "Codex-Error"      // the error code on refusal or failure
	TrailerMessage   = "Codex-Message"    // the error's message, on one line, credentials redacted
	TrailerClock     = "Codex-Clock"      // the commit's Lamport time, set by the store
	TrailerArgs      = "Codex-Args"       // the call's arguments as JSON, secrets redacted
	TrailerTarget    = "Codex-Target"     // the id of the record the call created or changed
	TrailerFollows   = "Codex-Follows"    // the call's first commit, on the commits that record its outcome
	TrailerUndoError = "Codex-Undo-Error" // an undo step that failed: what is left for cleanup
	TrailerAuth      = "Codex-Auth"       // how an agent caller proved itself: token, none or invalid (auth.agents warn/required)
	TrailerRedacted  = "Codex-Redacted"   // credentials git codex took out of what the commit holds: kinds and where, never values
)

// Trailer is one "Key: value" line at the end of a commit message.
type Trailer struct {
	Key   string
	Value string
}

// Meta is what a transaction says about itself: the commit's one-line summary
// and its trailers. The store adds TrailerClock.
type Meta struct {
	Summary  string
	Trailers []Trailer
	// Author is who the commit is attributed to; zero means the committer.
	Author Signature
}

// Get returns the value of the first trailer with key, or "".
func (m Meta) Get(key string) string {
	for _, t := range m.Trailers {
		if t.Key == key {
			return t.Value
		}
	}
	return ""
}

// message renders the commit message: summary, blank line, trailers. The
// summary and the values come from callers' text, so they are cut down to
// one line of printable text: a newline would end a trailer early (or start
// a forged one), a NUL would cut the message short, other control
// characters would make `git log` lie on a terminal.
func (m Meta) message(clock Clock) string {
	var b strings.Builder
	b.WriteString(oneLine(m.Summary))
	b.WriteString("\n\n")
	for _, t := range m.Trailers {
		if t.Key == TrailerClock {
			continue
		}
		b.WriteString(oneLine(t.Key))
		b.WriteString(": ")
		b.WriteString(oneLine(t.Value))
		b.WriteByte('\n')
	}
	b.WriteString(TrailerClock + ": " + strconv.FormatUint(uint64(clock), 10) + "\n")
	return b.String()
}

// oneLine turns every run of whitespace and control characters into one
// space, and drops bytes that are not UTF-8.
func oneLine(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// parseMessage splits a commit message into its summary and its trailers
// (the "Key: value" lines of the last paragraph).
func parseMessage(msg string) Meta {
	msg = strings.TrimRight(msg, "\n")
	summary, rest, _ := strings.Cut(msg, "\n")
	m := Meta{Summary: summary}
	paras := strings.Split(rest, "\n\n")
	last := strings.TrimSpace(paras[len(paras)-1])
	for _, line := range strings.Split(last, "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok || strings.ContainsAny(k, " \t") || k == "" {
			continue
		}
		m.Trailers = append(m.Trailers, Trailer{Key: k, Value: v})
	}
	return m
}

// clockOf reads the Lamport time from a commit message; commits without one
// (none that git codex wrote) count as time 0.
func clockOf(msg string) Clock {
	i := strings.LastIndex(msg, TrailerClock+": ")
	if i < 0 {
		return 0
	}
	v := msg[i+len(TrailerClock)+2:]
	if j := strings.IndexByte(v, '\n'); j >= 0 {
		v = v[:j]
	}
	n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0
	}
	return Clock(n)
}

package ui

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
)

var (
	// compiled on first use: every git codex process links this package,
	// few serve the page, and the repetitions cost ~0.5 ms to compile
	commitID   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{40}$`) })
	shortID    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-fA-F]{4,40}$`) })
	stateAgo   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^refs/codex/state~[0-9]{1,7}$`) })
	timeLayout = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"}
)

func isCommitID(s string) bool { return commitID().MatchString(s) }

// at resolves the request's ?at= to a state commit: "" (the tip) when
// absent; a commit id (full or abbreviated), refs/codex/state~N, or a time
// (RFC 3339, "2006-01-02 15:04[:05]" in UTC, or a date) otherwise, the
// newest commit made at or before it. Anything else is answered 400 (ok is
// false): it never reaches git as an option or a revision expression.
func (s *Server) at(w http.ResponseWriter, r *http.Request) (commit string, ok bool) {
	v := strings.TrimSpace(r.URL.Query().Get("at"))
	if v == "" {
		return "", true
	}
	if t, isTime := parseTime(v); isTime {
		c, err := s.commitAt(r, t)
		if err != nil {
			notFoundOr(w, r, err, "the state has no commit at or before "+t.Format(time.RFC3339))
			return "", false
		}
		return c, true
	}
	if !shortID().MatchString(v) && !stateAgo().MatchString(v) {
		writeError(w, http.StatusBadRequest, "INVALID_INPUT", "at must be a commit id, refs/codex/state~N or a time such as 2026-11-23T22:15:00Z")
		return "", false
	}
	ev, err := s.opts.Store.Event(r.Context(), strings.ToLower(v))
	if errors.Is(err, gitstate.ErrNotInitialized) {
		writeError(w, http.StatusNotFound, "NOT_INITIALIZED", "this repository has no git codex state yet: run `git codex init`")
		return "", false
	}
	if err != nil {
		notFoundOr(w, r, err, "at names no commit in this repository")
		return "", false
	}
	if ev.FoldedIn != "" {
		return s.foldedReadAt(w, r, ev)
	}
	return ev.Commit, true
}

// foldedReadAt answers ?at= a read that retention folded (FoldReads) and
// whose own commit git may have pruned since: the state it shows is the
// state commit the read saw (its Codex-Read-At), which is the tree the
// read's commit had. Without that commit here, a 404 RESOURCE_NOT_FOUND says
// where the read went.
func (s *Server) foldedReadAt(w http.ResponseWriter, r *http.Request, ev gitstate.Event) (string, bool) {
	seen := ev.Get(gitstate.TrailerReadAt)
	if isCommitID(seen) {
		at, err := s.opts.Store.Event(r.Context(), seen)
		if err == nil && at.FoldedIn == "" {
			return at.Commit, true
		}
		if err != nil && !errors.Is(err, gitstate.ErrNotFound) && !errors.Is(err, gitstate.ErrHistoryCutOff) {
			storeError(w, r, err)
			return "", false
		}
	}
	writeError(w, http.StatusNotFound, "RESOURCE_NOT_FOUND", fmt.Sprintf("%s is a read folded into %s (its reads.jsonl): the state commit it saw (%s %q) is not in this repository", ev.Commit, ev.FoldedIn, gitstate.TrailerReadAt, seen))
	return "", false
}

func parseTime(v string) (time.Time, bool) {
	for _, l := range timeLayout {
		if t, err := time.Parse(l, v); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// commitAt is the newest state commit made at or before t.
func (s *Server) commitAt(r *http.Request, t time.Time) (string, error) {
	tip := s.tip(r)
	if c, ok := s.atTimes.get(tip, t.Unix()); ok {
		return c, nil
	}
	c, err := s.opts.Store.StateAt(r.Context(), t)
	if err == nil && tip != "" && s.tip(r) == tip { // (the answer of that tip)
		s.atTimes.put(tip, t.Unix(), c)
	}
	return c, err
}

// tip is the state's tip commit, "" when it cannot be read.
func (s *Server) tip(r *http.Request) string {
	var tip string
	s.opts.Store.View(r.Context(), func(sn *gitstate.Snapshot) error { tip = sn.Commit(); return nil })
	return tip
}

// atTimes remembers what ?at= times resolved to at one tip: the page
// showing a past state asks /api/state and /api/events with the same
// ?at=, and each resolution is a `git rev-list` (a week back on a month's
// state ~20 ms of its CPU, ~60 ms wall: issue 27). At another tip it
// starts again: a sync may bring commits made before a time.
type atTimes struct {
	mu  sync.Mutex
	tip string
	at  map[int64]string // by the time's second (StateAt's resolution)
}

// maxAtTimes bounds the times remembered (a person tries a few).
const maxAtTimes = 64

func (a *atTimes) get(tip string, t int64) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.at[t]
	return c, ok && tip != "" && tip == a.tip
}

func (a *atTimes) put(tip string, t int64, c string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if tip != a.tip || len(a.at) >= maxAtTimes {
		a.tip, a.at = tip, map[int64]string{}
	}
	a.at[t] = c
}

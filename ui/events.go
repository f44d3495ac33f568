package ui

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
)

// eventJSON is one audit event as the API answers it: the store's one
// projection of an event (`git codex log --json` prints the same), whose
// result is also set on reads ("ok") and refusals (the error code), as the
// page shows it.
type eventJSON struct {
	gitstate.AuditEntry
	Result string `json:"result"`
}

func eventOf(ev gitstate.Event) eventJSON {
	e := eventJSON{AuditEntry: ev.Entry(), Result: ev.Get(gitstate.TrailerResult)}
	if e.Error != "" {
		e.Result = e.Error
	}
	if e.Result == "" {
		e.Result = "ok"
	}
	return e
}

// Paging bounds of /api/events.
const (
	defaultEvents = 50
	maxEvents     = 500
	// maxScanned bounds the commits one page walks looking for matches
	// to its filters; past it the page ends early and next continues.
	maxScanned = 5000
)

// eventPage is /api/events' answer: newest first; Next, when set, is the
// `before` that continues the walk.
type eventPage struct {
	Events []eventJSON `json:"events"`
	Next   string      `json:"next,omitempty"`
}

// serveEvents answers GET /api/events: the audit log, newest first, paged
// (limit, before=<commit> from the last page's next), filtered by tool,
// actor, errors=1 (refusals only) and changes=1 (changes only), from
// ?at= or the tip; reads=1 (and errors=1) include the reads and refusals
// recorded on the reads refs, interleaved by time. History is read lazily: a page reads its own commits
// and no more.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := defaultEvents
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxEvents {
			writeError(w, http.StatusBadRequest, "INVALID_INPUT", "limit must be a number from 1 to 500")
			return
		}
		limit = n
	}
	start := q.Get("before")
	if start != "" && !isCommitID(start) {
		writeError(w, http.StatusBadRequest, "INVALID_INPUT", "before must be a full commit id, the next of a previous page")
		return
	}
	if start == "" {
		at, ok := s.at(w, r)
		if !ok {
			return
		}
		start = at
	}
	tool, actor := q.Get("tool"), q.Get("actor")
	errorsOnly, changesOnly := q.Get("errors") == "1", q.Get("changes") == "1"
	revs := []string{start}
	var until time.Time // with reads, a later page's newest time: its reads chains start at their tips
	if q.Get("reads") == "1" || errorsOnly {
		// reads and refusals are recorded off the state, on this
		// machine's reads refs (gitstate.ReadsPrefix)
		reads, err := s.opts.Store.ReadsRefs()
		if err != nil {
			storeError(w, r, err)
			return
		}
		revs = append(revs, reads...)
		if q.Get("before") != "" {
			ev, err := s.opts.Store.Event(r.Context(), start)
			if err != nil {
				notFoundOr(w, r, err, "no such commit in the state's history")
				return
			}
			until = ev.Time
		}
	}
	page := eventPage{Events: []eventJSON{}}
	scanned := 0
	err := s.opts.Store.EventsOf(r.Context(), revs, func(ev gitstate.Event) bool {
		if !until.IsZero() && ev.Time.After(until) {
			return true // shown on an earlier page
		}
		if len(page.Events) == limit || scanned == maxScanned {
			page.Next = ev.Commit
			return false
		}
		scanned++
		e := eventOf(ev)
		if (tool != "" && e.Tool != tool) || (actor != "" && e.Actor != actor) ||
			(errorsOnly && e.Kind != "refusal") || (changesOnly && e.Kind != "change") {
			return true
		}
		page.Events = append(page.Events, e)
		return true
	})
	switch {
	case errors.Is(err, gitstate.ErrNotInitialized):
		writeJSON(w, http.StatusOK, page)
	case errors.Is(err, gitstate.ErrNotFound):
		writeError(w, http.StatusNotFound, "RESOURCE_NOT_FOUND", "no such commit in the state's history")
	case err != nil:
		storeError(w, r, err)
	default:
		writeJSON(w, http.StatusOK, page)
	}
}

// commitDetail is /api/commit/{rev}'s answer: the event and the records
// it changed.
type commitDetail struct {
	eventJSON
	Changes []gitstate.Change `json:"changes"`
}

// serveCommit answers GET /api/commit/{rev}: one event with the records
// it added, changed or deleted (every event on the page links here).
func (s *Server) serveCommit(w http.ResponseWriter, r *http.Request) {
	rev := r.PathValue("rev")
	if !isCommitID(rev) {
		writeError(w, http.StatusBadRequest, "INVALID_INPUT", "name the commit by its full id")
		return
	}
	ev, err := s.opts.Store.Event(r.Context(), rev)
	if err != nil {
		notFoundOr(w, r, err, "no such commit in this repository")
		return
	}
	ch, err := s.opts.Store.Changes(r.Context(), rev)
	if errors.Is(err, gitstate.ErrHistoryCutOff) {
		ch, err = []gitstate.Change{}, nil // its parent was never fetched: not known here
	}
	if err != nil {
		storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, commitDetail{eventJSON: eventOf(ev), Changes: ch})
}

func notFoundOr(w http.ResponseWriter, r *http.Request, err error, msg string) {
	if errors.Is(err, gitstate.ErrHistoryCutOff) {
		// a shallow first sync left it out: not absent, not fetched
		writeError(w, http.StatusNotFound, "HISTORY_CUT_OFF", err.Error())
		return
	}
	if errors.Is(err, gitstate.ErrNotFound) {
		writeError(w, http.StatusNotFound, "RESOURCE_NOT_FOUND", msg)
		return
	}
	storeError(w, r, err)
}

// storeError answers a store failure (unless the client left, when nobody
// is there to read it).
func storeError(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return
	}
	writeError(w, http.StatusInternalServerError, "STORE_ERROR", err.Error())
}

package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// writeWait bounds one write to a stream: a client that stops reading but
// keeps its connection open is dropped instead of holding a goroutine.
const writeWait = 10 * time.Second

// keepAlive is how often an idle stream gets a comment line, so proxies
// and the browser keep it open and a client that left is noticed.
const keepAlive = 25 * time.Second

// serveStream answers GET /api/stream: server-sent events, one "commit"
// event per new commit on the state ref (its id, tool, actor, kind and
// summary), oldest first. It starts with a "hello" event naming the tip.
// A stream that falls behind is ended; the page reconnects and reloads.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	ch, cancel, err := s.hub.subscribe()
	if errors.Is(err, errTooManyStreams) {
		writeError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "too many pages are open; close some and reload")
		return
	}
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "the server is closing")
		return
	}
	defer cancel()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	// send writes one event under a deadline and flushes it.
	send := func(format string, args ...any) bool {
		rc.SetWriteDeadline(time.Now().Add(writeWait))
		if _, err := fmt.Fprintf(w, format, args...); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	w.WriteHeader(http.StatusOK)
	if !send("retry: 1000\nevent: hello\ndata: {\"commit\":%q}\n\n", s.hub.tip(r.Context())) {
		return
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			if !send(": keep-alive\n\n") {
				return
			}
		case ev, open := <-ch:
			if !open {
				return
			}
			b, _ := json.Marshal(ev)
			if !send("id: %s\nevent: commit\ndata: %s\n\n", ev.Commit, b) {
				return
			}
		}
	}
}

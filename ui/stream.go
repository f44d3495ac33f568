package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// keepAlive is how often an idle stream gets a comment line, so proxies
// and the browser keep it open and a client that left is noticed.
const keepAlive = 25 * time.Second

// serveStream answers GET /api/stream: server-sent events, one "commit"
// event per new commit on the state ref (its id, tool, actor, kind and
// summary), oldest first. It starts with a "hello" event naming the tip.
// A stream that falls behind is ended; the page reconnects and reloads.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "INTERNAL_ERROR", "this connection cannot stream")
		return
	}
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
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: 1000\nevent: hello\ndata: {\"commit\":%q}\n\n", s.hub.tip(r.Context()))
	fl.Flush()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		case ev, open := <-ch:
			if !open {
				return
			}
			b, _ := json.Marshal(ev)
			if _, err := fmt.Fprintf(w, "id: %s\nevent: commit\ndata: %s\n\n", ev.Commit, b); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

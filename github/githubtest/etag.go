package githubtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
)

// Conditional requests, as GitHub answers them ("Best practices for using
// the REST API: use conditional requests"): every 200 answer to a GET
// carries an ETag, a weak one (W/"<hash>") made from what the answer
// holds (its body and Link header) and who asked (GitHub's ETags differ
// between tokens); a GET whose If-None-Match names it is answered 304 Not
// Modified, with the ETag and no body. Anything that changes a listing
// (a new review, a page's Link) changes its ETag. The server counts the
// 304s (NotModified); GitHub does not count them against the rate limit.

// NotModified is how many requests were answered 304 Not Modified.
func (s *Server) NotModified() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.requests {
		if r.Status == http.StatusNotModified {
			n++
		}
	}
	return n
}

// recorder holds an answer until its ETag is known.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

// conditional sends a GET's recorded answer: a 200 with its ETag, or a
// 304 when the request's If-None-Match names that ETag. It returns the
// status sent.
func (s *Server) conditional(w http.ResponseWriter, req *http.Request, rec *recorder) int {
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	if status == http.StatusOK {
		h := sha256.New()
		h.Write([]byte(req.Header.Get("Authorization") + "\x00" + req.Header.Get("Accept") + "\x00" + rec.header.Get("Link") + "\x00"))
		h.Write(rec.body.Bytes())
		etag := `W/"` + hex.EncodeToString(h.Sum(nil))[:32] + `"`
		w.Header().Set("ETag", etag)
		w.Header().Set("Cache-Control", "private, max-age=60, s-maxage=60")
		w.Header().Set("Vary", "Accept, Authorization, Cookie, X-GitHub-OTP")
		if matches(req.Header.Get("If-None-Match"), etag) {
			for _, k := range []string{"Content-Type", "Content-Length", "Link"} {
				w.Header().Del(k)
			}
			w.WriteHeader(http.StatusNotModified)
			return http.StatusNotModified
		}
	}
	w.WriteHeader(status)
	w.Write(rec.body.Bytes())
	return status
}

// matches is If-None-Match's weak comparison (RFC 9110, 13.1.2): "*", or
// any listed ETag equal to etag once W/ is ignored.
func matches(header, etag string) bool {
	if header == "" {
		return false
	}
	want := strings.TrimPrefix(etag, "W/")
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == want {
			return true
		}
	}
	return false
}

// statusWriter notes the status a handler sent.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

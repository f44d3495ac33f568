package ui

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"net"
	"net/http"
	"strings"
)

// tokenCookie carries the token after the first request that presented it
// in the URL, so the page's own requests (and its event stream, which
// cannot set headers) need not repeat it.
const tokenCookie = "codex_ui_token"

// guard checks every request before any route sees it:
//   - with a token, the request must present it (?token=, the cookie, or
//     "Authorization: Bearer"), else 401 and nothing else;
//   - without one (loopback only), the Host must name the loopback, so a
//     web site cannot reach the page through a DNS name rebound to
//     127.0.0.1;
//   - a POST must say it comes from the page (X-Codex-UI, a header a form
//     on another site cannot send without the browser asking first).
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.token != "" {
			got, fromQuery := presented(r)
			if subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="git codex ui"`)
				writeError(w, http.StatusUnauthorized, "UNAUTHORIZED", "this page needs its token: open the URL `git codex ui` printed")
				return
			}
			if fromQuery {
				http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			}
		} else if !loopbackHost(r.Host) {
			writeError(w, http.StatusForbidden, "FORBIDDEN", "without a token the page answers only to a loopback address (127.0.0.1, ::1, localhost)")
			return
		}
		if r.Method == http.MethodPost && r.Header.Get("X-Codex-UI") == "" {
			writeError(w, http.StatusForbidden, "FORBIDDEN", "actions come from the page: send the X-Codex-UI header")
			return
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

// presented returns the token a request carries and whether it came in the
// URL.
func presented(r *http.Request) (string, bool) {
	if t := r.URL.Query().Get("token"); t != "" {
		return t, true
	}
	if a, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(a), false
	}
	if c, err := r.Cookie(tokenCookie); err == nil {
		return c.Value, false
	}
	return "", false
}

// loopbackHost reports whether a Host header names the loopback.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// apiError is the body of every error answer: the same shape as a tool's
// error, so the page handles both alike.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, map[string]apiError{"error": {Code: code, Message: message}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := encodeJSON(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"error":{"code":"INTERNAL","message":"the answer could not be written as JSON"}}`+"\n")
	}
	writeBody(w, status, body)
}

// encodeJSON is v as writeJSON writes it. json.RawMessage values (the
// records the page shows) are checked to be JSON on the way: it fails on
// one that is not.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(true)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeBody writes a JSON answer encodeJSON made.
func writeBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(body) // a client that left is no error of ours
}

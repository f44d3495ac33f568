// Package githubtest is a stand-in for GitHub's REST API: a local HTTP
// server that speaks the part of the contract git codex uses (a
// repository's default branch; create, list, get and merge pull requests;
// list a pull request's reviews and review comments, page by page;
// create and list issues), answers with GitHub's error shapes (401, 403,
// 404, 422, 5xx, rate limits with their headers, no answer at all), gives
// every GET's answer an ETag and answers 304 Not Modified to a request
// that names it (etag.go), and keeps a record of every request it
// received, with the status it answered. Tests and `git codex demo`
// point git codex at it with `config set github.api_url <URL>` (or
// CODEX_GITHUB_API_URL), so nothing talks to github.com.
//
// It is a normal package, not a _test one, so that other packages' tests
// and the demo can start one.
package githubtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Server is a running stand-in. Its methods are safe to call while it
// serves.
type Server struct {
	// URL is the REST endpoint, with a trailing slash: the value of
	// github.api_url.
	URL string

	srv *http.Server

	mu       sync.Mutex
	token    string
	repos    map[string]*repo
	failures []*Failure
	requests []Request
	nextID   int64 // the next review or review comment id (reviews.go)
}

type repo struct {
	defaultBranch string
	next          int // the next pull request or issue number
	pulls         []*PullRequest
	issues        []*Issue
	reviews       map[int][]*Review        // by pull request number (reviews.go)
	comments      map[int][]*ReviewComment // by pull request number
}

// PullRequest is a pull request the server holds.
type PullRequest struct {
	Number   int    `json:"number"`
	Title    string `json:"title"`
	Body     string `json:"body"`
	Head     string `json:"head"`
	Base     string `json:"base"`
	State    string `json:"state"` // open or closed
	Merged   bool   `json:"merged"`
	MergeSHA string `json:"merge_commit_sha,omitempty"`
	Method   string `json:"merge_method,omitempty"`
	URL      string `json:"html_url"`
}

// Issue is an issue the server holds.
type Issue struct {
	Number int      `json:"number"`
	Title  string   `json:"title"`
	Body   string   `json:"body"`
	Labels []string `json:"labels"`
	URL    string   `json:"html_url"`
}

// Request is one request the server received.
type Request struct {
	Method string
	// Path is the URL path without the leading slash
	// (repos/o/r/pulls), Query its raw query.
	Path  string
	Query string
	Body  string
	// Auth is the Authorization header as received.
	Auth string
	// IfNoneMatch is the If-None-Match header as received: the ETags
	// the client had.
	IfNoneMatch string
	// Status is the HTTP status answered (0: the connection was
	// dropped); 304 for a GET whose If-None-Match named the answer's
	// ETag.
	Status int
}

// Failure makes matching requests fail before they are served.
type Failure struct {
	// Method and PathSuffix select requests ("" matches any): e.g.
	// "POST" and "/pulls".
	Method     string
	PathSuffix string
	// After is how many matching requests are served before the rule
	// starts failing them (0: from the first).
	After int
	// Times is how many matching requests fail; a negative number fails
	// them all.
	Times int
	// Status is the HTTP status to answer; 0 answers nothing at all (the
	// connection is closed).
	Status int
	// Message is GitHub's "message" in the answer (a default from the
	// status if empty).
	Message string
	// RateLimited adds GitHub's rate-limit headers: no requests left
	// (X-RateLimit-Remaining: 0) until Reset (Retry-After too for 429).
	RateLimited bool
	Reset       time.Time
}

// New starts a server. Close it when done.
func New() *Server {
	s := &Server{repos: map[string]*repo{}}
	// a plain listener rather than httptest's: the demo links this
	// package into the binary, and httptest's test certificate is parsed
	// at every process's start
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("githubtest: listen on loopback: %v", err))
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(l)
	s.URL = "http://" + l.Addr().String() + "/"
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// RequireToken makes every request without "token <tok>" or "Bearer <tok>"
// fail with 401, as GitHub does for a bad credential.
func (s *Server) RequireToken(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = tok
}

// SetDefaultBranch sets a repository's (owner/name) default branch; it is
// "main" until set.
func (s *Server) SetDefaultBranch(repo, branch string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repo(repo).defaultBranch = branch
}

// Fail adds a failure rule; rules are tried in the order added.
func (s *Server) Fail(f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, &f)
}

// ClearFailures removes every failure rule.
func (s *Server) ClearFailures() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = nil
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// PullRequests returns a repository's pull requests, oldest first.
func (s *Server) PullRequests(repo string) []PullRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []PullRequest
	for _, p := range s.repo(repo).pulls {
		out = append(out, *p)
	}
	return out
}

// Issues returns a repository's issues, oldest first.
func (s *Server) Issues(repo string) []Issue {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Issue
	for _, i := range s.repo(repo).issues {
		out = append(out, *i)
	}
	return out
}

// AddPullRequest opens a pull request as if someone had (a PR made before
// git codex looked), and returns it.
func (s *Server) AddPullRequest(repo, title, head, base string) PullRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.openPull(repo, title, "", head, base)
}

func (s *Server) repo(name string) *repo {
	r, ok := s.repos[name]
	if !ok {
		r = &repo{defaultBranch: "main", next: 1}
		s.repos[name] = r
	}
	return r
}

func (s *Server) openPull(repoName, title, body, head, base string) *PullRequest {
	r := s.repo(repoName)
	p := &PullRequest{Number: r.next, Title: title, Body: body, Head: head, Base: base, State: "open",
		URL: fmt.Sprintf("%s%s/pull/%d", s.URL, repoName, r.next)}
	r.next++
	r.pulls = append(r.pulls, p)
	return p
}

func (s *Server) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	path := strings.TrimPrefix(req.URL.Path, "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{Method: req.Method, Path: path, Query: req.URL.RawQuery, Body: string(body), Auth: req.Header.Get("Authorization"),
		IfNoneMatch: req.Header.Get("If-None-Match")})
	if f := s.failure(req.Method, path); f != nil {
		s.requests[len(s.requests)-1].Status = f.Status
		s.fail(w, f)
		return
	}
	if req.Method == http.MethodGet {
		// a GET's answer gets its ETag, or is a 304 (etag.go)
		rec := newRecorder()
		s.route(rec, req, path, body)
		s.requests[len(s.requests)-1].Status = s.conditional(w, req, rec)
		return
	}
	st := &statusWriter{ResponseWriter: w}
	s.route(st, req, path, body)
	s.requests[len(s.requests)-1].Status = st.status
}

// route answers a request that no failure rule took.
func (s *Server) route(w http.ResponseWriter, req *http.Request, path string, body []byte) {
	if s.token != "" {
		auth := req.Header.Get("Authorization")
		if auth != "token "+s.token && auth != "Bearer "+s.token {
			writeError(w, http.StatusUnauthorized, "Bad credentials", nil)
			return
		}
	}
	parts := strings.Split(path, "/")
	if len(parts) < 3 || parts[0] != "repos" {
		writeError(w, http.StatusNotFound, "Not Found", nil)
		return
	}
	repoName := parts[1] + "/" + parts[2]
	rest := parts[3:]
	switch {
	case len(rest) == 0 && req.Method == http.MethodGet:
		r := s.repo(repoName)
		writeJSON(w, http.StatusOK, map[string]any{"full_name": repoName, "default_branch": r.defaultBranch})
	case len(rest) == 1 && rest[0] == "pulls" && req.Method == http.MethodPost:
		s.createPull(w, repoName, body)
	case len(rest) == 1 && rest[0] == "pulls" && req.Method == http.MethodGet:
		s.listPulls(w, repoName, req)
	case len(rest) == 2 && rest[0] == "pulls" && req.Method == http.MethodGet:
		if p := s.pull(repoName, rest[1]); p != nil {
			writeJSON(w, http.StatusOK, pullJSON(p))
			return
		}
		writeError(w, http.StatusNotFound, "Not Found", nil)
	case len(rest) == 3 && rest[0] == "pulls" && rest[2] == "merge" && req.Method == http.MethodPut:
		s.mergePull(w, repoName, rest[1], body)
	case len(rest) >= 3 && rest[0] == "pulls" && (rest[2] == "reviews" || rest[2] == "comments") && req.Method == http.MethodGet:
		s.serveReviews(w, req, repoName, rest)
	case len(rest) == 1 && rest[0] == "issues" && req.Method == http.MethodPost:
		s.createIssue(w, repoName, body)
	case len(rest) == 1 && rest[0] == "issues" && req.Method == http.MethodGet:
		out := []map[string]any{}
		for _, i := range s.repo(repoName).issues {
			out = append(out, issueJSON(i))
		}
		sort.Slice(out, func(a, b int) bool { return out[a]["number"].(int) > out[b]["number"].(int) }) // newest first
		writeJSON(w, http.StatusOK, out)
	default:
		writeError(w, http.StatusNotFound, "Not Found", nil)
	}
}

// failure finds the first rule matching a request and uses it up.
func (s *Server) failure(method, path string) *Failure {
	for _, f := range s.failures {
		if f.Times == 0 || (f.Method != "" && f.Method != method) || (f.PathSuffix != "" && !strings.HasSuffix(path, f.PathSuffix)) {
			continue
		}
		if f.After > 0 {
			f.After--
			continue
		}
		if f.Times > 0 {
			f.Times--
		}
		return f
	}
	return nil
}

func (s *Server) fail(w http.ResponseWriter, f *Failure) {
	if f.Status == 0 { // no answer: drop the connection
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	if f.RateLimited {
		reset := f.Reset
		if reset.IsZero() {
			reset = time.Now().Add(time.Second)
		}
		w.Header().Set("X-RateLimit-Limit", "5000")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
		if f.Status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", strconv.Itoa(max(0, int(time.Until(reset).Seconds()))))
		}
	}
	msg := f.Message
	if msg == "" {
		msg = http.StatusText(f.Status)
		if f.RateLimited {
			msg = "API rate limit exceeded"
		}
	}
	writeError(w, f.Status, msg, nil)
}

func (s *Server) createPull(w http.ResponseWriter, repoName string, body []byte) {
	var in struct {
		Title, Body, Head, Base string
	}
	if err := json.Unmarshal(body, &in); err != nil || in.Title == "" || in.Head == "" || in.Base == "" {
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed", []map[string]string{{"resource": "PullRequest", "code": "missing_field", "message": "title, head and base are required"}})
		return
	}
	head := branchOf(in.Head)
	if head == in.Base {
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed", []map[string]string{{"resource": "PullRequest", "code": "custom", "message": "No commits between " + in.Base + " and " + head}})
		return
	}
	for _, p := range s.repo(repoName).pulls {
		if p.State == "open" && p.Head == head && p.Base == in.Base {
			owner := strings.SplitN(repoName, "/", 2)[0]
			writeError(w, http.StatusUnprocessableEntity, "Validation Failed", []map[string]string{{"resource": "PullRequest", "code": "custom", "message": "A pull request already exists for " + owner + ":" + head + "."}})
			return
		}
	}
	writeJSON(w, http.StatusCreated, pullJSON(s.openPull(repoName, in.Title, in.Body, head, in.Base)))
}

func (s *Server) listPulls(w http.ResponseWriter, repoName string, req *http.Request) {
	q := req.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	out := []map[string]any{}
	for _, p := range s.repo(repoName).pulls {
		if (state != "all" && p.State != state) || (q.Get("head") != "" && p.Head != branchOf(q.Get("head"))) || (q.Get("base") != "" && p.Base != q.Get("base")) {
			continue
		}
		out = append(out, pullJSON(p))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) pull(repoName, number string) *PullRequest {
	n, err := strconv.Atoi(number)
	if err != nil {
		return nil
	}
	for _, p := range s.repo(repoName).pulls {
		if p.Number == n {
			return p
		}
	}
	return nil
}

func (s *Server) mergePull(w http.ResponseWriter, repoName, number string, body []byte) {
	p := s.pull(repoName, number)
	if p == nil {
		writeError(w, http.StatusNotFound, "Not Found", nil)
		return
	}
	if p.State != "open" {
		writeError(w, http.StatusMethodNotAllowed, "Pull Request is not mergeable", nil)
		return
	}
	var in struct {
		MergeMethod string `json:"merge_method"`
	}
	_ = json.Unmarshal(body, &in)
	if in.MergeMethod == "" {
		in.MergeMethod = "merge"
	}
	p.State, p.Merged, p.Method = "closed", true, in.MergeMethod
	p.MergeSHA = fmt.Sprintf("%040x", p.Number*7919+len(repoName))
	writeJSON(w, http.StatusOK, map[string]any{"sha": p.MergeSHA, "merged": true, "message": "Pull Request successfully merged"})
}

func (s *Server) createIssue(w http.ResponseWriter, repoName string, body []byte) {
	var in struct {
		Title  string   `json:"title"`
		Body   string   `json:"body"`
		Labels []string `json:"labels"`
	}
	if err := json.Unmarshal(body, &in); err != nil || in.Title == "" {
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed", []map[string]string{{"resource": "Issue", "code": "missing_field", "field": "title"}})
		return
	}
	r := s.repo(repoName)
	i := &Issue{Number: r.next, Title: in.Title, Body: in.Body, Labels: append([]string{}, in.Labels...),
		URL: fmt.Sprintf("%s%s/issues/%d", s.URL, repoName, r.next)}
	r.next++
	r.issues = append(r.issues, i)
	writeJSON(w, http.StatusCreated, issueJSON(i))
}

// branchOf strips the "owner:" GitHub allows before a head branch.
func branchOf(head string) string {
	if _, b, ok := strings.Cut(head, ":"); ok {
		return b
	}
	return head
}

func pullJSON(p *PullRequest) map[string]any {
	return map[string]any{
		"number": p.Number, "title": p.Title, "body": p.Body, "state": p.State, "merged": p.Merged,
		"html_url": p.URL, "merge_commit_sha": p.MergeSHA,
		"head": map[string]any{"ref": p.Head}, "base": map[string]any{"ref": p.Base},
	}
}

func issueJSON(i *Issue) map[string]any {
	labels := []map[string]string{}
	for _, l := range i.Labels {
		labels = append(labels, map[string]string{"name": l})
	}
	return map[string]any{"number": i.Number, "title": i.Title, "body": i.Body, "html_url": i.URL, "labels": labels, "state": "open"}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string, errs []map[string]string) {
	v := map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest"}
	if errs != nil {
		v["errors"] = errs
	}
	writeJSON(w, status, v)
}

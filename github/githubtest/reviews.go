package githubtest

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Reviews of pull requests, in the shapes of GitHub's REST reference
// ("REST API endpoints for pull request reviews" and "... for pull request
// review comments"):
//
//	GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews
//	GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/comments
//	GET /repos/{owner}/{repo}/pulls/{pull_number}/comments
//
// Lists are paginated as GitHub paginates them: per_page (default 30, at
// most 100) and page, with a Link header naming the next, last, first and
// prev pages. Reviews come in chronological order, comments in ascending
// id order. A PENDING review is listed as GitHub lists it to its own
// author (without submitted_at): a client must skip it, as it must skip a
// DISMISSED one.

// Review is a pull request review the server holds.
type Review struct {
	ID          int64     `json:"id"`
	User        string    `json:"user"` // the login
	Body        string    `json:"body"`
	State       string    `json:"state"` // APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED or PENDING
	CommitID    string    `json:"commit_id"`
	SubmittedAt time.Time `json:"submitted_at"`
	URL         string    `json:"html_url"`
}

// ReviewComment is a comment on a line of a pull request's diff.
type ReviewComment struct {
	ID        int64  `json:"id"`
	ReviewID  int64  `json:"pull_request_review_id"`
	InReplyTo int64  `json:"in_reply_to_id,omitempty"`
	User      string `json:"user"`
	Path      string `json:"path"`
	Line      int    `json:"line"`
	Side      string `json:"side"` // LEFT or RIGHT
	Body      string `json:"body"`
	DiffHunk  string `json:"diff_hunk"`
	CommitID  string `json:"commit_id"`
	CreatedAt time.Time
	URL       string `json:"html_url"`
}

// AddReview submits a review of pull request number as user, with line
// comments (their Path, Line, Side, Body, DiffHunk and InReplyTo are
// used; Side defaults to RIGHT). It returns the review as stored, with
// its id; the comments get ids and the review's.
func (s *Server) AddReview(repoName string, number int, user, state, body, commitID string, comments []ReviewComment) (Review, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(repoName, strconv.Itoa(number))
	if p == nil {
		return Review{}, fmt.Errorf("githubtest: %s has no pull request #%d", repoName, number)
	}
	switch state {
	case "APPROVED", "CHANGES_REQUESTED", "COMMENTED", "DISMISSED", "PENDING":
	default:
		return Review{}, fmt.Errorf("githubtest: review state %q is none of GitHub's", state)
	}
	r := s.repo(repoName)
	if r.reviews == nil {
		r.reviews, r.comments = map[int][]*Review{}, map[int][]*ReviewComment{}
	}
	now := time.Now().UTC().Truncate(time.Second)
	rv := &Review{ID: s.newID(), User: user, Body: body, State: state, CommitID: commitID, SubmittedAt: now}
	rv.URL = fmt.Sprintf("%s#pullrequestreview-%d", p.URL, rv.ID)
	r.reviews[number] = append(r.reviews[number], rv)
	for _, c := range comments {
		c.ID, c.ReviewID, c.User, c.CommitID, c.CreatedAt = s.newID(), rv.ID, user, commitID, now
		if c.Side == "" {
			c.Side = "RIGHT"
		}
		c.URL = fmt.Sprintf("%s#discussion_r%d", p.URL, c.ID)
		r.comments[number] = append(r.comments[number], &c)
	}
	return *rv, nil
}

// SetReviewState changes a review's state, as dismissing it (DISMISSED)
// or submitting a pending one does.
func (s *Server) SetReviewState(repoName string, number int, id int64, state string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rv := range s.repo(repoName).reviews[number] {
		if rv.ID == id {
			rv.State = state
			return nil
		}
	}
	return fmt.Errorf("githubtest: %s #%d has no review %d", repoName, number, id)
}

func (s *Server) newID() int64 {
	if s.nextID == 0 {
		s.nextID = 80 // GitHub's examples start there; any positive id will do
	}
	s.nextID++
	return s.nextID - 1
}

// serveReviews answers the three list endpoints; rest is the path after
// repos/{owner}/{repo}: pulls/{n}/reviews, pulls/{n}/reviews/{id}/comments
// or pulls/{n}/comments.
func (s *Server) serveReviews(w http.ResponseWriter, req *http.Request, repoName string, rest []string) {
	p := s.pull(repoName, rest[1])
	if p == nil {
		writeError(w, http.StatusNotFound, "Not Found", nil)
		return
	}
	r := s.repo(repoName)
	var items []map[string]any
	switch {
	case len(rest) == 3 && rest[2] == "reviews":
		for _, rv := range r.reviews[p.Number] {
			items = append(items, s.reviewJSON(req, repoName, p, rv))
		}
	case len(rest) == 5 && rest[2] == "reviews" && rest[4] == "comments":
		id, err := strconv.ParseInt(rest[3], 10, 64)
		found := false
		for _, rv := range r.reviews[p.Number] {
			found = found || (err == nil && rv.ID == id)
		}
		if !found {
			writeError(w, http.StatusNotFound, "Not Found", nil)
			return
		}
		for _, c := range r.comments[p.Number] {
			if c.ReviewID == id {
				items = append(items, s.commentJSON(req, repoName, p, c))
			}
		}
	case len(rest) == 3 && rest[2] == "comments":
		for _, c := range r.comments[p.Number] {
			items = append(items, s.commentJSON(req, repoName, p, c))
		}
	default:
		writeError(w, http.StatusNotFound, "Not Found", nil)
		return
	}
	page, ok := paginate(w, req, items)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// paginate cuts one page out of items and sets the Link header, as GitHub
// does; ok is false when it answered an error instead.
func paginate(w http.ResponseWriter, req *http.Request, items []map[string]any) (page []map[string]any, ok bool) {
	q := req.URL.Query()
	perPage, pageNo := 30, 1
	if v := q.Get("per_page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			writeError(w, http.StatusUnprocessableEntity, "Validation Failed", []map[string]string{{"resource": "Search", "field": "per_page", "code": "invalid"}})
			return nil, false
		}
		perPage = min(n, 100)
	}
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			writeError(w, http.StatusUnprocessableEntity, "Validation Failed", []map[string]string{{"resource": "Search", "field": "page", "code": "invalid"}})
			return nil, false
		}
		pageNo = n
	}
	last := max(1, (len(items)+perPage-1)/perPage)
	link := func(n int) string {
		u := url.URL{Scheme: "http", Host: req.Host, Path: req.URL.Path}
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set("per_page", strconv.Itoa(perPage))
		v.Set("page", strconv.Itoa(n))
		u.RawQuery = v.Encode()
		return "<" + u.String() + ">"
	}
	var links []string
	if pageNo < last {
		links = append(links, link(pageNo+1)+`; rel="next"`, link(last)+`; rel="last"`)
	}
	if pageNo > 1 {
		links = append(links, link(1)+`; rel="first"`, link(pageNo-1)+`; rel="prev"`)
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	page = []map[string]any{}
	if from := (pageNo - 1) * perPage; from < len(items) {
		page = items[from:min(from+perPage, len(items))]
	}
	return page, true
}

func (s *Server) apiURL(req *http.Request, format string, args ...any) string {
	return "http://" + req.Host + "/" + fmt.Sprintf(format, args...)
}

func userJSON(login string) map[string]any {
	return map[string]any{"login": login, "id": len(login)*1000 + 1, "type": "User", "site_admin": false,
		"html_url": "https://github.com/" + login}
}

func (s *Server) reviewJSON(req *http.Request, repoName string, p *PullRequest, rv *Review) map[string]any {
	pullURL := s.apiURL(req, "repos/%s/pulls/%d", repoName, p.Number)
	v := map[string]any{
		"id": rv.ID, "node_id": fmt.Sprintf("PRR_%d", rv.ID), "user": userJSON(rv.User), "body": rv.Body, "state": rv.State,
		"html_url": rv.URL, "pull_request_url": pullURL, "author_association": "COLLABORATOR",
		"_links":       map[string]any{"html": map[string]string{"href": rv.URL}, "pull_request": map[string]string{"href": pullURL}},
		"submitted_at": rv.SubmittedAt.Format(time.RFC3339), "commit_id": rv.CommitID,
	}
	if rv.State == "PENDING" {
		delete(v, "submitted_at") // not submitted yet
	}
	return v
}

func (s *Server) commentJSON(req *http.Request, repoName string, p *PullRequest, c *ReviewComment) map[string]any {
	self := s.apiURL(req, "repos/%s/pulls/comments/%d", repoName, c.ID)
	pullURL := s.apiURL(req, "repos/%s/pulls/%d", repoName, p.Number)
	v := map[string]any{
		"url": self, "pull_request_review_id": c.ReviewID, "id": c.ID, "node_id": fmt.Sprintf("PRRC_%d", c.ID),
		"diff_hunk": c.DiffHunk, "path": c.Path, "position": c.Line, "original_position": c.Line,
		"commit_id": c.CommitID, "original_commit_id": c.CommitID, "user": userJSON(c.User), "body": c.Body,
		"created_at": c.CreatedAt.Format(time.RFC3339), "updated_at": c.CreatedAt.Format(time.RFC3339),
		"html_url": c.URL, "pull_request_url": pullURL, "author_association": "COLLABORATOR",
		"_links": map[string]any{"self": map[string]string{"href": self}, "html": map[string]string{"href": c.URL},
			"pull_request": map[string]string{"href": pullURL}},
		"start_line": nil, "original_start_line": nil, "start_side": nil,
		"line": c.Line, "original_line": c.Line, "side": c.Side, "subject_type": "line",
	}
	if c.InReplyTo != 0 {
		v["in_reply_to_id"] = c.InReplyTo
	}
	return v
}

package github

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"github.com/gitcodex/git-codex/tools"
)

var _ tools.GitHubReviews = (*Client)(nil)

// maxPages bounds one listing: 30 pages of 100 is more reviews than a
// pull request has; past that the list is cut rather than followed
// forever.
const maxPages = 30

// review is a pull request review as the REST API returns it.
type review struct {
	ID   int64 `json:"id"`
	User *struct {
		Login string `json:"login"`
	} `json:"user"`
	Body        string    `json:"body"`
	State       string    `json:"state"`
	CommitID    string    `json:"commit_id"`
	SubmittedAt time.Time `json:"submitted_at"`
	HTMLURL     string    `json:"html_url"`
}

// ListReviews lists a pull request's reviews, oldest first
// (GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews, every page).
func (c *Client) ListReviews(ctx context.Context, number int) ([]tools.PRReview, error) {
	var out []tools.PRReview
	err := c.pages(ctx, c.path("pulls/%d/reviews?per_page=100", number), func(body []byte) error {
		var page []review
		if err := json.Unmarshal(body, &page); err != nil {
			return err
		}
		for _, r := range page {
			v := tools.PRReview{ID: r.ID, Body: r.Body, State: r.State, CommitID: r.CommitID, SubmittedAt: r.SubmittedAt, URL: r.HTMLURL}
			if r.User != nil {
				v.User = r.User.Login
			}
			out = append(out, v)
		}
		return nil
	})
	return out, err
}

// reviewComment is a pull request review comment as the REST API
// returns it.
type reviewComment struct {
	ID        int64 `json:"id"`
	ReviewID  int64 `json:"pull_request_review_id"`
	InReplyTo int64 `json:"in_reply_to_id"`
	User      *struct {
		Login string `json:"login"`
	} `json:"user"`
	Path         string `json:"path"`
	Line         *int   `json:"line"`
	OriginalLine *int   `json:"original_line"`
	Side         string `json:"side"`
	Body         string `json:"body"`
	DiffHunk     string `json:"diff_hunk"`
	HTMLURL      string `json:"html_url"`
}

// ListReviewComments lists a pull request's review comments, by id
// (GET /repos/{owner}/{repo}/pulls/{pull_number}/comments, every page):
// one listing for all its reviews. A comment on a line that later
// commits removed has no line, only its original_line.
func (c *Client) ListReviewComments(ctx context.Context, number int) ([]tools.PRReviewComment, error) {
	var out []tools.PRReviewComment
	err := c.pages(ctx, c.path("pulls/%d/comments?per_page=100", number), func(body []byte) error {
		var page []reviewComment
		if err := json.Unmarshal(body, &page); err != nil {
			return err
		}
		for _, r := range page {
			v := tools.PRReviewComment{ID: r.ID, ReviewID: r.ReviewID, InReplyTo: r.InReplyTo, Path: r.Path, Side: r.Side,
				Body: r.Body, DiffHunk: r.DiffHunk, URL: r.HTMLURL}
			if r.User != nil {
				v.User = r.User.Login
			}
			switch {
			case r.Line != nil:
				v.Line = *r.Line
			case r.OriginalLine != nil:
				v.Line = *r.OriginalLine
			}
			out = append(out, v)
		}
		return nil
	})
	return out, err
}

// nextLink is the rel="next" URL of a Link header.
var nextLink = regexp.MustCompile(`<([^>]+)>\s*;\s*rel="next"`)

// pages GETs path and each page after it (the Link header's next), and
// hands each body to page. The next page must be on the same host: the
// token goes with every request.
func (c *Client) pages(ctx context.Context, path string, page func(body []byte) error) error {
	var host string
	for n := 0; path != ""; n++ {
		if n == maxPages {
			return &tools.GitHubError{Status: http.StatusOK, Message: fmt.Sprintf("GitHub listed more than %d pages; stopped there", maxPages)}
		}
		resp, err := c.rest.RequestWithContext(ctx, http.MethodGet, path, nil)
		if err != nil {
			e := asGitHubError(err)
			e.Message = scrubToken(e.Message, c.token)
			return e
		}
		var body []byte
		body, err = readAll(resp)
		if err != nil {
			return &tools.GitHubError{Message: "GitHub did not answer: " + err.Error()}
		}
		if host == "" {
			host = resp.Request.URL.Host
		}
		if err := page(body); err != nil {
			return &tools.GitHubError{Status: resp.StatusCode, Message: fmt.Sprintf("GitHub answered %s with what is not a list of its records: %v", resp.Request.URL.Path, err)}
		}
		path = ""
		if m := nextLink.FindStringSubmatch(resp.Header.Get("Link")); m != nil {
			u, err := url.Parse(m[1])
			if err != nil || u.Host != host {
				return &tools.GitHubError{Status: resp.StatusCode, Message: fmt.Sprintf("GitHub's next page %q is not on %s; not followed", m[1], host)}
			}
			path = u.String()
		}
	}
	return nil
}

// maxBody bounds one page's body (100 reviews with long bodies fit).
const maxBody = 32 << 20

func readAll(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err == nil && len(b) > maxBody {
		err = fmt.Errorf("a page of more than %d bytes", maxBody)
	}
	return b, err
}

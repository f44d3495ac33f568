// Package github is git codex's forge: pull requests and issues on GitHub
// through go-gh's REST client, with go-gh's own resolution of hosts and
// tokens (GH_TOKEN, GITHUB_TOKEN, gh's hosts.yml, `gh auth token`). It
// implements tools.GitHub; the registry gets it as Env.GitHub (Open),
// wired where the registry is built, so tests point it at a local
// stand-in (package githubtest) through github.api_url.
package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/cli/go-gh/v2/pkg/api"
	"github.com/cli/go-gh/v2/pkg/auth"
	"github.com/cli/go-gh/v2/pkg/repository"
	"github.com/gitcodex/git-codex/tools"
)

// requestTimeout bounds one request: a forge that does not answer is a
// transient failure, retried, never a call that hangs.
const requestTimeout = 30 * time.Second

// Client is one repository on one forge.
type Client struct {
	rest  *api.RESTClient
	base  string // an absolute REST endpoint ending in "/", or "" for go-gh's own
	owner string
	name  string
	token string // to take out of whatever GitHub (or a proxy) says back
}

var _ tools.GitHub = (*Client)(nil)

// Open connects to the repository s names: GH_REPO, else the URL of the
// origin remote of s.Dir. The token is go-gh's for the repository's host.
// With s.APIURL set, requests go to that endpoint instead of the host's
// (the token is sent there, and only there). It fails with a
// *tools.GitHubError (Status 0) when no repository or token is found.
// The client remembers its GETs' answers with their ETags (etag.go);
// clients that should share them are opened by one Cache's Open.
func Open(ctx context.Context, s tools.GitHubSettings) (tools.GitHub, error) {
	return open(ctx, s, NewCache())
}

func open(ctx context.Context, s tools.GitHubSettings, cache *Cache) (tools.GitHub, error) {
	r, err := currentRepo(ctx, s.Dir)
	if err != nil {
		return nil, &tools.GitHubError{Message: err.Error()}
	}
	token, _ := auth.TokenForHost(r.Host)
	if token == "" {
		return nil, &tools.GitHubError{Message: fmt.Sprintf("no GitHub token for %s: set GH_TOKEN (or GITHUB_TOKEN), or log in with `gh auth login`", r.Host)}
	}
	opts := api.ClientOptions{Host: r.Host, AuthToken: token, Timeout: requestTimeout, LogIgnoreEnv: true,
		Transport: &conditional{next: http.DefaultTransport, cache: cache}}
	base := ""
	if s.APIURL != "" {
		// the token goes there: https, or plain http to this machine only
		if err := tools.CheckAPIURL(s.APIURL); err != nil {
			return nil, &tools.GitHubError{Message: fmt.Sprintf("github.api_url: %v; set it with `git config codex.github.apiUrl https://host/api/v3/`", err)}
		}
		u, _ := url.Parse(s.APIURL)
		// the token goes to this host and no other
		opts.Host = u.Hostname()
		base = strings.TrimSuffix(u.String(), "/") + "/"
	}
	rest, err := api.NewRESTClient(opts)
	if err != nil {
		return nil, &tools.GitHubError{Message: fmt.Sprintf("the GitHub client: %v", err)}
	}
	return &Client{rest: rest, base: base, owner: r.Owner, name: r.Name, token: token}, nil
}

// currentRepo is GH_REPO, else the origin remote's repository.
func currentRepo(ctx context.Context, dir string) (repository.Repository, error) {
	if s := os.Getenv("GH_REPO"); s != "" {
		r, err := repository.Parse(s)
		if err != nil {
			return r, fmt.Errorf("GH_REPO=%q names no repository (use owner/name): %w", s, err)
		}
		return r, nil
	}
	cmd := exec.CommandContext(ctx, "git", "remote", "get-url", "origin")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return repository.Repository{}, errors.New("no GitHub repository: this repository has no origin remote; add one (`git remote add origin https://github.com/owner/name`) or set GH_REPO=owner/name")
	}
	remote := strings.TrimSpace(string(out))
	r, err := repository.Parse(remote)
	if err != nil {
		return r, fmt.Errorf("no GitHub repository: origin (%s) is not a GitHub URL; set GH_REPO=owner/name", remote)
	}
	return r, nil
}

// Repo is owner/name.
func (c *Client) Repo() string { return c.owner + "/" + c.name }

func (c *Client) path(format string, args ...any) string {
	return c.base + fmt.Sprintf("repos/%s/%s/", url.PathEscape(c.owner), url.PathEscape(c.name)) + fmt.Sprintf(format, args...)
}

// do sends one request and turns every failure into a *tools.GitHubError.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body *bytes.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	var err error
	if body != nil {
		err = c.rest.DoWithContext(ctx, method, path, body, out)
	} else {
		err = c.rest.DoWithContext(ctx, method, path, nil, out)
	}
	if err == nil {
		return nil
	}
	e := asGitHubError(err)
	e.Message = scrubToken(e.Message, c.token)
	return e
}

// scrubToken takes the request's credential out of a message: GitHub, or a
// proxy on the way, may repeat what it was sent ("Bad credentials: token
// ..."), and the message is recorded (the call record's last_error, the
// audit trailer) and pushed. Whatever its shape: a token of a kind the
// secret scanner does not know (an old 40-hex OAuth token) is taken out
// here, where it is known.
func scrubToken(msg, token string) string {
	if len(token) < 8 { // nothing that short is a token; do not mangle the message
		return msg
	}
	for _, t := range []string{token, url.QueryEscape(token)} {
		msg = strings.ReplaceAll(msg, t, "[redacted: GitHub token]")
	}
	return msg
}

// asGitHubError says what GitHub answered (its status and message, and
// when a rate limit resets), or that it did not answer.
func asGitHubError(err error) *tools.GitHubError {
	var he *api.HTTPError
	if !errors.As(err, &he) {
		return &tools.GitHubError{Message: "GitHub did not answer: " + err.Error()}
	}
	msg := he.Message
	for _, item := range he.Errors {
		if item.Message != "" {
			msg += ": " + item.Message
		} else if item.Code != "" {
			msg += fmt.Sprintf(": %s %s %s", item.Resource, item.Field, item.Code)
		}
	}
	e := &tools.GitHubError{Status: he.StatusCode, Message: fmt.Sprintf("GitHub answered %d: %s", he.StatusCode, strings.TrimSpace(msg))}
	if he.StatusCode == http.StatusForbidden || he.StatusCode == http.StatusTooManyRequests {
		e.RetryAt = rateLimitReset(he.Headers)
	}
	return e
}

// rateLimitReset is when GitHub says a rate limit ends: Retry-After
// seconds, or X-RateLimit-Reset once no requests remain; zero for none.
func rateLimitReset(h http.Header) time.Time {
	if s := h.Get("Retry-After"); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			return time.Now().Add(time.Duration(n) * time.Second)
		}
	}
	if h.Get("X-RateLimit-Remaining") == "0" {
		if n, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			return time.Unix(n, 0)
		}
	}
	return time.Time{}
}

// DefaultBranch is the repository's default branch.
func (c *Client) DefaultBranch(ctx context.Context) (string, error) {
	var r struct {
		DefaultBranch string `json:"default_branch"`
	}
	if err := c.do(ctx, http.MethodGet, c.base+fmt.Sprintf("repos/%s/%s", url.PathEscape(c.owner), url.PathEscape(c.name)), nil, &r); err != nil {
		return "", err
	}
	if r.DefaultBranch == "" {
		return "", &tools.GitHubError{Status: http.StatusOK, Message: "GitHub named no default branch for " + c.Repo()}
	}
	return r.DefaultBranch, nil
}

// pull is a pull request as the REST API returns it.
type pull struct {
	Number  int    `json:"number"`
	HTMLURL string `json:"html_url"`
	State   string `json:"state"`
	Merged  bool   `json:"merged"`
	Head    struct {
		Ref string `json:"ref"`
	} `json:"head"`
	Base struct {
		Ref string `json:"ref"`
	} `json:"base"`
}

func (p pull) pr() tools.PullRequest {
	return tools.PullRequest{Number: p.Number, URL: p.HTMLURL, Head: p.Head.Ref, Base: p.Base.Ref, State: p.State, Merged: p.Merged}
}

// CreatePullRequest opens a pull request.
func (c *Client) CreatePullRequest(ctx context.Context, in tools.NewPullRequest) (tools.PullRequest, error) {
	var p pull
	err := c.do(ctx, http.MethodPost, c.path("pulls"), map[string]string{"title": in.Title, "body": in.Body, "head": in.Head, "base": in.Base}, &p)
	return p.pr(), err
}

// FindPullRequest finds the open pull request from head into base.
func (c *Client) FindPullRequest(ctx context.Context, head, base string) (tools.PullRequest, bool, error) {
	q := url.Values{"state": {"open"}, "head": {c.owner + ":" + head}, "base": {base}}
	var ps []pull
	if err := c.do(ctx, http.MethodGet, c.path("pulls?%s", q.Encode()), nil, &ps); err != nil {
		return tools.PullRequest{}, false, err
	}
	for _, p := range ps {
		if p.Head.Ref == head && p.Base.Ref == base {
			return p.pr(), true, nil
		}
	}
	return tools.PullRequest{}, false, nil
}

// GetPullRequest reads one pull request.
func (c *Client) GetPullRequest(ctx context.Context, number int) (tools.PullRequest, error) {
	var p pull
	err := c.do(ctx, http.MethodGet, c.path("pulls/%d", number), nil, &p)
	return p.pr(), err
}

// MergePullRequest merges a pull request (method merge, squash or rebase).
func (c *Client) MergePullRequest(ctx context.Context, number int, method string) (string, error) {
	var r struct {
		SHA    string `json:"sha"`
		Merged bool   `json:"merged"`
	}
	if err := c.do(ctx, http.MethodPut, c.path("pulls/%d/merge", number), map[string]string{"merge_method": method}, &r); err != nil {
		return "", err
	}
	return r.SHA, nil
}

// issue is an issue as the REST API returns it.
type issue struct {
	Number      int             `json:"number"`
	HTMLURL     string          `json:"html_url"`
	Body        string          `json:"body"`
	PullRequest json.RawMessage `json:"pull_request"`
}

// CreateIssue opens an issue.
func (c *Client) CreateIssue(ctx context.Context, in tools.NewIssue) (tools.Issue, error) {
	body := map[string]any{"title": in.Title, "body": in.Body}
	if len(in.Labels) > 0 {
		body["labels"] = in.Labels
	}
	var i issue
	err := c.do(ctx, http.MethodPost, c.path("issues"), body, &i)
	return tools.Issue{Number: i.Number, URL: i.HTMLURL}, err
}

// FindIssue looks for an issue whose body holds marker among the
// repository's 100 most recent (open or closed; pull requests skipped).
func (c *Client) FindIssue(ctx context.Context, marker string) (tools.Issue, bool, error) {
	var is []issue
	if err := c.do(ctx, http.MethodGet, c.path("issues?state=all&sort=created&direction=desc&per_page=100"), nil, &is); err != nil {
		return tools.Issue{}, false, err
	}
	for _, i := range is {
		if len(i.PullRequest) == 0 && strings.Contains(i.Body, marker) {
			return tools.Issue{Number: i.Number, URL: i.HTMLURL}, true, nil
		}
	}
	return tools.Issue{}, false, nil
}

package forge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/mail"
	"github.com/gitcodex/git-codex/tools/review"
)

// A GitHub call (create_pull_request, create_issues) is a record first:
// its intent, written under the writer lock with everything the call will
// send. The network call runs after that commit (Call.After), tried up to
// retry.max_attempts times, each failed try recorded; its outcome is one
// more commit. A call that could not be made (no token, no network,
// GitHub down) stays PENDING and `git codex github retry` replays it; a
// replay asks GitHub first whether the pull request or issue is already
// there, so nothing is ever sent twice.

// Dir is where GitHub call records live: github/<x>/<y>/<id>.json.
const Dir = "github"

// Retention is the name `git codex archive` and retention.github.days
// give GitHub calls that ended.
const Retention = "github"

// GitHub call states.
const (
	GitHubPending = "PENDING" // not made yet, or its outcome not known: github retry replays it
	GitHubDone    = "DONE"    // GitHub did it; the result is recorded
	GitHubFailed  = "FAILED"  // GitHub refused it (401, 403, 404, 422), or the branch held nothing to propose; replaying would not help
)

// Operations a GitHub call record holds: the names of the tools that ask
// for them, which escalation also reads.
const (
	OpCreatePR     = "create_pull_request"
	OpCreateIssues = "create_issues"
)

var githubCallIDPattern = tools.LazyRegexp(`^g-[0-9a-z]{16}$`)

// CallPath is where call id's record lives.
func CallPath(id string) string {
	return Dir + "/" + gitstate.Fanout(id) + "/" + id + ".json"
}

// CallKind is the kind of GitHub call records: github/<x>/<y>/<id>.json,
// one record per GitHub call.
func CallKind() tools.Kind {
	k := tools.RecordKind(tools.Kind{Name: "github call", Dir: Dir, Depth: 3, Fanout: 2, Kept: true}, func(rel []string, name string, g *GitHubCall) error {
		if g.ID != name || !githubCallIDPattern.MatchString(g.ID) || !tools.FannedOut(rel, g.ID) {
			return fmt.Errorf("github call record %q does not belong at this path", g.ID)
		}
		switch g.State {
		case GitHubPending, GitHubDone, GitHubFailed:
			return nil
		}
		return fmt.Errorf("github call %s has unknown state %q", g.ID, g.State)
	})
	k.Retention = Retention
	k.Archived = func(data []byte) bool {
		var g GitHubCall
		return json.Unmarshal(data, &g) == nil && (g.State == GitHubDone || g.State == GitHubFailed)
	}
	return k
}

// GitHubCall is one call to GitHub and what came of it. Mutable: Clock is
// the Lamport time of its last change.
type GitHubCall struct {
	ID     string `json:"id"`
	Op     string `json:"op" jsonschema:"create_pull_request or create_issues"`
	Caller string `json:"caller" jsonschema:"who asked for it"`
	// For is the instance a pull request is recorded on when it is not
	// the caller's own: a reviewer's approval opens its coder's.
	For string `json:"for,omitempty" jsonschema:"the coder whose pull request a reviewer opened"`
	// Task is the task the pull request's owner held when it was asked
	// for; the pull request is recorded on it.
	Task string `json:"task_id,omitempty"`
	// A pull request's title, body and branches (Base empty: the
	// repository's default branch).
	Title string `json:"title,omitempty"`
	Body  string `json:"body,omitempty"`
	Head  string `json:"head,omitempty"`
	Base  string `json:"base,omitempty"`
	// Issues to open, each with its number once opened.
	Issues   []IssueRequest `json:"issues,omitempty"`
	Repo     string         `json:"repo,omitempty" jsonschema:"owner/name, once known"`
	State    string         `json:"state" jsonschema:"PENDING (github retry replays it), DONE or FAILED"`
	Attempts int            `json:"attempts" jsonschema:"tries made so far"`
	// LastError is the last failure: its code and message (never a
	// credential: GitHub's messages hold none, and they are redacted).
	LastCode  tools.Code         `json:"last_code,omitempty"`
	LastError string             `json:"last_error,omitempty"`
	PR        *tools.PullRequest `json:"pr,omitempty"`
	CreatedAt time.Time          `json:"created_at"`
	UpdatedAt time.Time          `json:"updated_at"`
	UpdatedBy string             `json:"updated_by"`
	Clock     gitstate.Clock     `json:"clock"`
}

// IssueRequest is one issue of create_issues, and once opened its number
// and URL.
type IssueRequest struct {
	Title  string   `json:"title"`
	Body   string   `text:"multiline" json:"body" jsonschema:"markdown"`
	Labels []string `json:"labels,omitempty" jsonschema:"existing labels of the repository"`
	Number int      `json:"number,omitempty" jsonschema:"once opened"`
	URL    string   `json:"url,omitempty" jsonschema:"once opened"`
}

// GetCall reads call id, RESOURCE_NOT_FOUND when there is none.
func GetCall(tx *gitstate.Tx, id string) (GitHubCall, error) {
	notFound := tools.Errorf(tools.ResourceNotFound, "no GitHub call %q; list pending ones with `git codex github retry --list`", id).With("call_id", id)
	if !githubCallIDPattern.MatchString(id) {
		return GitHubCall{}, notFound
	}
	var g GitHubCall
	err := tx.Get(CallPath(id), &g)
	if errors.Is(err, gitstate.ErrNotFound) {
		return GitHubCall{}, notFound
	}
	return g, err
}

// Keys are the settings of GitHub calls (their retries are retry.*, the
// framework's).
func Keys() []tools.ConfigKey {
	return []tools.ConfigKey{
		{Name: "github.api_url", Kind: "string", Default: "", Local: true, CheckString: tools.CheckAPIURL,
			Doc: "GitHub's REST endpoint, which receives the GitHub token: https (e.g. https://ghe.example.com/api/v3/), or plain http to a stand-in on this machine; empty: the repository host's own. This machine's: git config codex.github.apiUrl; CODEX_GITHUB_API_URL overrides it"},
	}
}

// Settings are where the forge is: CODEX_GITHUB_API_URL, else
// github.api_url as this machine's git config sets it (never the shared
// state's: the token goes there). The endpoint is given as set, so that a
// bad one is refused where the token would be sent (CheckAPIURL), not
// replaced by the default.
func Settings(cfg *tools.Config, dir string) tools.GitHubSettings {
	k, _ := cfg.Keys().Lookup("github.api_url")
	raw, _ := cfg.LocalRaw(k)
	s := tools.GitHubSettings{Dir: dir, APIURL: raw}
	if u := os.Getenv("CODEX_GITHUB_API_URL"); u != "" {
		s.APIURL = u
	}
	return s
}

// TaskOutcome records a pull request on the task its owner held (g.Task),
// in the transaction that records the call DONE. The tasks are work's, a
// noun above this package: work hands its function to NewRun.
type TaskOutcome func(c *tools.Call, g GitHubCall, owner string) error

// Run is one run of GitHub calls from an after-step: the forge
// (opened once), the settings in force.
type Run struct {
	f       *tools.Followup
	cfg     *tools.Config
	gh      tools.GitHub
	openErr *tools.GitHubError
	retry   tools.RetryPolicy
	onTask  TaskOutcome
}

// NewRun opens the forge for the calls an after-step makes; onTask
// records a pull request made on its task.
func NewRun(ctx context.Context, f *tools.Followup, onTask TaskOutcome) (*Run, error) {
	cfg, err := f.Config(ctx)
	if err != nil {
		return nil, err
	}
	r := &Run{f: f, cfg: cfg, retry: tools.RetryPolicyOf(cfg), onTask: onTask}
	r.gh, r.openErr = OpenGitHub(ctx, f, cfg)
	return r, nil
}

// OpenGitHub connects to the forge from an after-step, with the settings
// in force (cfg: the config at the tip). Its error says why none could be
// reached (no client, repository or token); Unavailable(err) is the
// call's GITHUB_UNAVAILABLE.
func OpenGitHub(ctx context.Context, f *tools.Followup, cfg *tools.Config) (tools.GitHub, *tools.GitHubError) {
	if f.Env.GitHub == nil {
		return nil, &tools.GitHubError{Message: "no GitHub client in this git codex"}
	}
	if err := cfg.LocalErr(); err != nil {
		return nil, &tools.GitHubError{Message: fmt.Sprintf("cannot read this machine's git config for github.api_url: %v", err)}
	}
	s := Settings(cfg, f.Store.WorkDir())
	if s.APIURL != "" {
		// the token goes to this endpoint: never in the clear
		if err := tools.CheckAPIURL(s.APIURL); err != nil {
			return nil, &tools.GitHubError{Message: fmt.Sprintf("GitHub endpoint refused (git config codex.github.apiUrl or CODEX_GITHUB_API_URL): %v", err)}
		}
	}
	gh, err := f.Env.GitHub(ctx, s)
	if err != nil {
		var ge *tools.GitHubError
		if !errors.As(err, &ge) {
			ge = &tools.GitHubError{Message: err.Error()}
		}
		return nil, ge
	}
	return gh, nil
}

// Make makes call g (read again from the state: a replay may find it done),
// trying up to r.attempts times, and records the outcome. It returns the
// call as recorded, and the call's error: GITHUB_REFUSED (FAILED),
// GITHUB_UNAVAILABLE or TRANSIENT_ERROR (still PENDING).
func (r *Run) Make(ctx context.Context, id string) (GitHubCall, error) {
	var g GitHubCall
	// one process at a time makes a call: two replays at once would both
	// find nothing made and both make it
	release, err := r.f.Store.HoldWork(id)
	if err != nil {
		return g, tools.Errorf(tools.GitHubUnavailable, "GitHub call %s is being made by another process; see how it went with `git codex github retry --list`", id).With("call_id", id)
	}
	defer release()
	if err := r.f.Store.View(ctx, func(s *gitstate.Snapshot) error {
		return s.Get(CallPath(id), &g)
	}); err != nil {
		return g, err
	}
	if g.State != GitHubPending {
		return g, nil
	}
	if r.openErr != nil {
		e := Unavailable(r.openErr)
		return g, r.outcome(ctx, &g, e, 0)
	}
	g.Repo = r.gh.Repo()
	again := g.Attempts > 0
	done := r.retry.Do(ctx, func(try int) error {
		err := r.perform(ctx, &g, again || try > 1)
		g.Attempts++
		return err
	}, Verdict, func(try int, err error, wait time.Duration) {
		ge := AsGitHubError(err)
		// each failed try is in the audit trail
		tryErr := tools.Errorf(tools.TransientError, "try %d of %d failed: %s; trying again in %s", try, r.retry.Attempts, ge.Message, wait.Round(time.Millisecond)).
			With("call_id", g.ID).With("attempt", try).With("status", ge.Status).With("wait_ms", wait.Milliseconds())
		_ = r.f.Record(ctx, func(c *tools.Call) error {
			c.Target(g.ID)
			return tryErr
		})
	})
	try := done.Tries
	if done.Err == nil {
		return g, r.outcome(ctx, &g, nil, try)
	}
	var ge *tools.GitHubError
	if !errors.As(done.Err, &ge) {
		return g, r.outcome(ctx, &g, tools.AsError(done.Err), try)
	}
	if !ge.Transient() {
		return g, r.outcome(ctx, &g, Refused(ge), try)
	}
	if done.Interrupted != nil {
		return g, r.outcome(ctx, &g, Unavailable(&tools.GitHubError{Message: "cancelled while waiting to retry: " + done.Interrupted.Error()}), try)
	}
	e := tools.Errorf(tools.TransientError, "%s failed %d time(s): %s; it is kept PENDING: `git codex github retry %s` replays it", g.Op, try, ge.Message, g.ID)
	if ge.Status == 0 {
		e = Unavailable(ge)
		e.Message = fmt.Sprintf("%s: tried %d time(s). It is kept PENDING: `git codex github retry %s` replays it", ge.Message, try, g.ID)
	}
	if !ge.RetryAt.IsZero() {
		e = e.With("retry_at", ge.RetryAt.UTC().Format(time.RFC3339))
	}
	return g, r.outcome(ctx, &g, e.With("attempts", try).With("status", ge.Status), try)
}

// Verdict is the retry policy's verdict on a GitHub call's error:
// GitHub's transient failures (no answer, 5xx, rate limits) are tried
// again, no sooner than a rate limit's reset.
func Verdict(err error) tools.RetryVerdict {
	var ge *tools.GitHubError
	if !errors.As(err, &ge) || !ge.Transient() {
		return tools.RetryVerdict{}
	}
	v := tools.RetryVerdict{Transient: true}
	if until := time.Until(ge.RetryAt); until > 0 {
		v.NotBefore = until
	}
	return v
}

// AsGitHubError is err as GitHub's (a transient failure always is one).
func AsGitHubError(err error) *tools.GitHubError {
	var ge *tools.GitHubError
	if errors.As(err, &ge) {
		return ge
	}
	return &tools.GitHubError{Message: err.Error()}
}

// Unavailable is GITHUB_UNAVAILABLE for a forge that could not be reached
// or opened.
func Unavailable(ge *tools.GitHubError) *tools.Error {
	return tools.Errorf(tools.GitHubUnavailable, "%s; the call is kept PENDING: `git codex github retry` replays it", ge.Message)
}

// Refused is GITHUB_REFUSED with GitHub's status and message.
func Refused(ge *tools.GitHubError) *tools.Error {
	hint := ""
	switch ge.Status {
	case 401:
		hint = " (check GH_TOKEN or `gh auth status`)"
	case 403:
		hint = " (the token may lack the repo scope)"
	case 404:
		hint = " (check the repository: origin or GH_REPO, and that the token can see it)"
	}
	return tools.Errorf(tools.GitHubRefused, "%s%s", ge.Message, hint).With("status", ge.Status)
}

// perform makes the call once. again is true for a retry or a replay:
// GitHub may have done it already, so it is looked for first.
func (r *Run) perform(ctx context.Context, g *GitHubCall, again bool) error {
	switch g.Op {
	case OpCreatePR:
		base := g.Base
		if base == "" {
			b, err := r.gh.DefaultBranch(ctx)
			if err != nil {
				return err
			}
			base = b
		}
		if base == g.Head {
			return &tools.GitHubError{Status: 422, Message: fmt.Sprintf("your branch %s is the base branch; work on a branch of your own", g.Head)}
		}
		if why := NothingToPropose(ctx, r.f.Store.GitDir(), g.Head, base); why != "" {
			return tools.Errorf(tools.InvalidAgentState, "%s", why).With("branch", g.Head).With("base_branch", base)
		}
		if _, err := dropScaffolding(ctx, r.f.Repo, g.Head, base, g.Caller); err != nil {
			return tools.Errorf(tools.TransientError, "could not remove %s from %s before the pull request: %v; `git codex github retry %s` tries again", review.FeedbackFile, g.Head, err, g.ID)
		}
		push := []string{g.Head}
		if epicBase(base) {
			push = append(push, base)
		}
		if err := PublishBranches(ctx, r.f.Repo, push...); err != nil {
			return err
		}
		// an open pull request from this branch is the one to record
		// (made by an earlier try, or by someone else)
		pr, ok, err := r.gh.FindPullRequest(ctx, g.Head, base)
		if err != nil {
			return err
		}
		if !ok {
			pr, err = r.gh.CreatePullRequest(ctx, tools.NewPullRequest{Title: g.Title, Body: g.Body, Head: g.Head, Base: base})
			var ge *tools.GitHubError
			if errors.As(err, &ge) && ge.Status == 422 && strings.Contains(ge.Message, "already exists") {
				pr, ok, err = r.gh.FindPullRequest(ctx, g.Head, base)
				if err == nil && !ok {
					err = ge
				}
			}
			if err != nil {
				return err
			}
		}
		g.PR = &pr
		return nil
	case OpCreateIssues:
		for i := range g.Issues {
			is := &g.Issues[i]
			if is.Number != 0 {
				continue
			}
			marker := issueMarker(g.ID, i)
			if again {
				found, ok, err := r.gh.FindIssue(ctx, marker)
				if err != nil {
					return err
				}
				if ok {
					is.Number, is.URL = found.Number, found.URL
					continue
				}
			}
			made, err := r.gh.CreateIssue(ctx, tools.NewIssue{Title: is.Title, Body: is.Body + "\n\n" + marker, Labels: is.Labels})
			if err != nil {
				return err
			}
			is.Number, is.URL = made.Number, made.URL
		}
		return nil
	}
	return fmt.Errorf("unknown GitHub operation %q", g.Op)
}

// issueMarker is the line in an issue's body that ties it to its call, so
// a replay finds it rather than opening it again.
func issueMarker(id string, i int) string {
	return fmt.Sprintf("<!-- git-codex: %s/%d -->", id, i)
}

// outcome records how call g ended (e nil: done) in one commit: the call's
// record, and for a pull request the caller's instance and task. The
// issues opened so far are kept even when a later one failed.
func (r *Run) outcome(ctx context.Context, g *GitHubCall, e *tools.Error, tries int) error {
	rerr := r.f.Record(ctx, func(c *tools.Call) error {
		cur, err := GetCall(c.Tx, g.ID)
		if err != nil {
			return err
		}
		if cur.State != GitHubPending { // another replay got there first
			c.Target(g.ID)
			c.Summarize("%s %s was %s already (another replay finished it)", cur.Op, cur.ID, cur.State)
			*g = cur
			return nil
		}
		now := c.Tx.Now()
		cur.Repo, cur.Attempts, cur.Issues, cur.PR = g.Repo, g.Attempts, g.Issues, g.PR
		cur.UpdatedAt, cur.UpdatedBy, cur.Clock = now, c.Caller.ID, c.Tx.Clock()
		c.Target(g.ID)
		switch {
		case e == nil:
			cur.State, cur.LastCode, cur.LastError = GitHubDone, "", ""
			if cur.PR != nil {
				c.Summarize("%s opened pull request #%d (%s -> %s)", cur.Caller, cur.PR.Number, cur.Head, cur.PR.Base)
				if err := r.recordPR(c, cur); err != nil {
					return err
				}
			} else {
				c.Summarize("%s opened %d issue(s)", cur.Caller, len(cur.Issues))
			}
		case e.Code == tools.GitHubRefused:
			cur.State, cur.LastCode, cur.LastError = GitHubFailed, e.Code, tools.RedactSecrets(e.Message)
			c.Summarize("GitHub refused %s %s: %s", cur.Op, cur.ID, mail.OneLineCut(e.Message))
		case e.Code == tools.InvalidAgentState: // nothing to propose: replaying would not help
			cur.State, cur.LastCode, cur.LastError = GitHubFailed, e.Code, tools.RedactSecrets(e.Message)
			c.Summarize("%s %s refused before pushing: %s", cur.Op, cur.ID, mail.OneLineCut(e.Message))
		default:
			cur.LastCode, cur.LastError = e.Code, tools.RedactSecrets(e.Message)
			c.Summarize("%s %s is PENDING after %d try(s): %s", cur.Op, cur.ID, tries, mail.OneLineCut(e.Message))
		}
		if e != nil {
			c.Failed(e)
		}
		*g = cur
		return c.Tx.Put(CallPath(cur.ID), cur)
	})
	if rerr != nil {
		return rerr
	}
	if e != nil {
		return e.With("call_id", g.ID)
	}
	return nil
}

// recordPR puts the pull request on its owner's instance (the caller's,
// or the coder's for a reviewer) and, through r.onTask, on the task it
// holds.
func (r *Run) recordPR(c *tools.Call, g GitHubCall) error {
	tx := c.Tx
	now := tx.Now()
	owner := g.Caller
	if g.For != "" {
		owner = g.For
	}
	if a, err := tools.GetAgent(tx, owner); err == nil {
		a.PR = g.PR
		a.UpdatedAt, a.UpdatedBy, a.Clock = now, c.Caller.ID, tx.Clock()
		if err := tx.Put(tools.AgentPath(a.ID), a); err != nil {
			return err
		}
	}
	if g.Task == "" || r.onTask == nil {
		return nil
	}
	return r.onTask(c, g, owner)
}

// ReplayOthers replays, once each, the calls that were PENDING when this
// one was asked for (ids, from its transaction): GitHub answers again, so
// what waited for it goes now. Failures stay PENDING for `git codex
// github retry`.
func (r *Run) ReplayOthers(ctx context.Context, ids []string) {
	saved := r.retry.Attempts
	r.retry.Attempts = 1
	defer func() { r.retry.Attempts = saved }()
	for _, id := range ids {
		if _, err := r.Make(ctx, id); err != nil {
			return // GitHub stopped answering: the rest wait for the next retry
		}
	}
}

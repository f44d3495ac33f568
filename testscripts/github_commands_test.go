package testscripts

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/github/githubtest"
	"github.com/rogpeppe/go-internal/testscript"
)

// githubCommands drive a stand-in of GitHub's REST API (githubtest) in
// the test process, for scripts that point git codex at it:
//
//	github start [token]      start it; $GITHUB_API is its URL (github.api_url)
//	github fail METHOD SUFFIX TIMES STATUS [ratelimit]
//	                          make matching requests fail (- matches any
//	                          method or path; TIMES -1: always; STATUS 0: no answer)
//	github clear              remove every failure rule
//	github prs OWNER/NAME     print the repository's pull requests (JSON)
//	github issues OWNER/NAME  print its issues (JSON)
//	github requests [-status] print "METHOD path" of every request received
//	                          (-status: "METHOD path STATUS", and
//	                          " if-none-match" when it sent an ETag)
//	github mark               the next waits count requests from here on
//	github wait N REGEXP      wait (20 s) until N requests since the mark,
//	                          printed as -status prints them, match REGEXP
//	github review OWNER/NAME PR USER STATE BODY [commit=SHA] [PATH:LINE:COMMENT...]
//	                          submit a review of pull request PR as USER
//	                          (APPROVED, CHANGES_REQUESTED, COMMENTED,
//	                          PENDING, DISMISSED) with line comments; prints
//	                          {"id": N}
//	github dismiss OWNER/NAME PR ID
//	                          dismiss review ID (state DISMISSED)
func githubCommands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"github": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg {
				ts.Fatalf("github does not take !")
			}
			if len(args) == 0 {
				ts.Fatalf("usage: github start|fail|clear|prs|issues|requests")
			}
			holder := ts.Value(githubKey{}).(*githubHolder)
			if args[0] == "start" {
				if holder.srv != nil {
					ts.Fatalf("github: already started")
				}
				holder.srv = githubtest.New()
				if len(args) > 1 {
					holder.srv.RequireToken(args[1])
				}
				ts.Defer(holder.srv.Close)
				ts.Setenv("GITHUB_API", holder.srv.URL)
				return
			}
			srv := holder.srv
			if srv == nil {
				ts.Fatalf("github: run `github start` first")
			}
			switch args[0] {
			case "fail":
				if len(args) < 5 {
					ts.Fatalf("usage: github fail METHOD SUFFIX TIMES STATUS [ratelimit]")
				}
				f := githubtest.Failure{Method: any1(args[1]), PathSuffix: any1(args[2])}
				var err error
				if f.Times, err = strconv.Atoi(args[3]); err != nil {
					ts.Fatalf("github fail: TIMES: %v", err)
				}
				if f.Status, err = strconv.Atoi(args[4]); err != nil {
					ts.Fatalf("github fail: STATUS: %v", err)
				}
				if len(args) > 5 && args[5] == "ratelimit" {
					f.RateLimited, f.Reset = true, time.Now()
				}
				srv.Fail(f)
			case "clear":
				srv.ClearFailures()
			case "prs", "issues":
				if len(args) != 2 {
					ts.Fatalf("usage: github %s OWNER/NAME", args[0])
				}
				var v any = srv.PullRequests(args[1])
				if args[0] == "issues" {
					v = srv.Issues(args[1])
				}
				b, err := json.MarshalIndent(v, "", "  ")
				ts.Check(err)
				fmt.Fprintf(ts.Stdout(), "%s\n", b)
			case "review":
				cmdGitHubReview(ts, srv, args[1:])
			case "dismiss":
				if len(args) != 4 {
					ts.Fatalf("usage: github dismiss OWNER/NAME PR ID")
				}
				n, err1 := strconv.Atoi(args[2])
				id, err2 := strconv.ParseInt(args[3], 10, 64)
				if err1 != nil || err2 != nil {
					ts.Fatalf("github dismiss: PR and ID are numbers")
				}
				ts.Check(srv.SetReviewState(args[1], n, id, "DISMISSED"))
			case "requests":
				status := len(args) > 1 && args[1] == "-status"
				for _, r := range srv.Requests() {
					if status {
						fmt.Fprintln(ts.Stdout(), requestLine(r))
					} else {
						fmt.Fprintf(ts.Stdout(), "%s %s\n", r.Method, r.Path)
					}
				}
			case "mark":
				holder.mark = len(srv.Requests())
			case "wait":
				if len(args) != 3 {
					ts.Fatalf("usage: github wait N REGEXP")
				}
				n, err := strconv.Atoi(args[1])
				re, err2 := regexp.Compile(args[2])
				if err != nil || err2 != nil {
					ts.Fatalf("github wait: N is a number and REGEXP a regular expression")
				}
				got := 0
				for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
					got = 0
					for _, r := range srv.Requests()[holder.mark:] {
						if re.MatchString(requestLine(r)) {
							got++
						}
					}
					if got >= n || time.Now().After(deadline) {
						break
					}
				}
				if got < n {
					ts.Fatalf("github wait: %d request(s) match %s after 20s, want %d", got, args[2], n)
				}
			default:
				ts.Fatalf("github: unknown subcommand %q", args[0])
			}
		},
	}
}

// requestLine is a request as `github requests -status` prints it.
func requestLine(r githubtest.Request) string {
	line := fmt.Sprintf("%s %s %d", r.Method, r.Path, r.Status)
	if r.IfNoneMatch != "" {
		line += " if-none-match"
	}
	return line
}

// any1 is "" for "-": a failure rule that matches any method or path.
func any1(s string) string {
	if s == "-" {
		return ""
	}
	return s
}

// githubKey finds a script's githubHolder among its values.
type githubKey struct{}

// githubHolder is the stand-in a script started, if any.
type githubHolder struct {
	srv  *githubtest.Server
	mark int // github mark: where github wait starts counting
}

// cmdGitHubReview submits a review on the stand-in (github review).
func cmdGitHubReview(ts *testscript.TestScript, srv *githubtest.Server, args []string) {
	if len(args) < 5 {
		ts.Fatalf("usage: github review OWNER/NAME PR USER STATE BODY [commit=SHA] [PATH:LINE:COMMENT...]")
	}
	n, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("github review: PR: %v", err)
	}
	commit := ""
	var comments []githubtest.ReviewComment
	for _, a := range args[5:] {
		if c, ok := strings.CutPrefix(a, "commit="); ok {
			commit = c
			continue
		}
		parts := strings.SplitN(a, ":", 3)
		if len(parts) != 3 {
			ts.Fatalf("github review: a comment is PATH:LINE:COMMENT, not %q", a)
		}
		line, err := strconv.Atoi(parts[1])
		if err != nil {
			ts.Fatalf("github review: LINE of %q: %v", a, err)
		}
		hunk := fmt.Sprintf("@@ -0,0 +1,%d @@\n+line %d of %s", line, line, parts[0])
		comments = append(comments, githubtest.ReviewComment{Path: parts[0], Line: line, Body: parts[2], DiffHunk: hunk})
	}
	r, err := srv.AddReview(args[0], n, args[2], args[3], args[4], commit, comments)
	ts.Check(err)
	fmt.Fprintf(ts.Stdout(), "{\"id\": %d}\n", r.ID)
}

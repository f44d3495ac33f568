package demo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// The stand-in agent is what the demo's launcher starts in each pane
// instead of Claude Code, Codex or Gemini CLI. It keeps the launcher
// contract a real agent CLI keeps: started by the pane's shell in the
// instance's worktree with its first prompt as the last argument, its
// identity and credential in the MCP config git codex wrote
// (CODEX_MCP_CONFIG), and one line of input per message typed into its
// pane (a nudge). It has no model: a fixed script, chosen by the agent
// type git codex reports for it, drives the tools through `git codex call`
// as the MCP config's identity.

// greetV1 is the coder's first attempt: it greets nobody when no name is
// given, which the reviewer finds.
const greetV1 = `#!/bin/sh
# greet.sh NAME: greets NAME.
echo "Hello, $1!"
`

// greetV2 is the coder's fix after the needs_work review.
const greetV2 = `#!/bin/sh
# greet.sh NAME: greets NAME.
if [ $# -ne 1 ] || [ -z "$1" ]; then
	echo "usage: greet.sh NAME" >&2
	exit 2
fi
echo "Hello, $1!"
`

// greetFile is the file the coder writes and the reviewer runs.
const greetFile = "greet.sh"

// AgentIO is what the stand-in runs with: its arguments (after the
// subcommand), its streams (the pane's terminal), its environment and the
// git-codex executable it calls tools through.
type AgentIO struct {
	Args   []string
	Stdin  io.Reader
	Stdout io.Writer
	Getenv func(string) string
	// Exe is the git-codex executable (`<Exe> call <tool> <json>`).
	Exe string
}

// agent is one running stand-in.
type agent struct {
	AgentIO
	id, token string
	dir       string
	lines     *bufio.Scanner
}

// mcpConfig is the part of the MCP config (Claude Code's format) the
// stand-in reads: git codex's server and the environment it runs with.
type mcpConfig struct {
	MCPServers map[string]struct {
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
	} `json:"mcpServers"`
}

// RunAgent runs the stand-in until its input ends; it returns the process
// exit status (1 when its launch contract is broken: no MCP config, no
// identity).
func RunAgent(ctx context.Context, io AgentIO) int {
	a := &agent{AgentIO: io, lines: bufio.NewScanner(io.Stdin)}
	if err := a.load(); err != nil {
		fmt.Fprintf(a.Stdout, "git codex demo agent: %v\n", err)
		return 1
	}
	prompt := ""
	if len(a.Args) > 0 {
		prompt = a.Args[len(a.Args)-1]
	}
	fmt.Fprintln(a.Stdout, "git codex demo agent: a stand-in for an agent CLI (a fixed script, no model, no API key)")
	if first, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n"); first != "" {
		fmt.Fprintf(a.Stdout, "> %s\n", first)
	}
	me, err := a.whoAmI(ctx)
	if err != nil {
		fmt.Fprintf(a.Stdout, "git codex demo agent: %v\n", err)
		return a.idle()
	}
	fmt.Fprintf(a.Stdout, "I am %s, a %s agent.\n", me.ID, me.Type)
	switch me.Type {
	case "coding":
		err = a.code(ctx)
	case "review":
		err = a.review(ctx, me.ReviewOf)
	default:
		fmt.Fprintf(a.Stdout, "nothing is scripted for a %s agent; type a line and I echo it\n", me.Type)
	}
	if err != nil {
		fmt.Fprintf(a.Stdout, "git codex demo agent: %v\n", err)
	}
	return a.idle()
}

// load reads the identity from the MCP config git codex wrote for this
// instance, as a real agent CLI would start git codex's server with it.
func (a *agent) load() error {
	path := a.Getenv("CODEX_MCP_CONFIG")
	if path == "" {
		return errors.New("no MCP config: CODEX_MCP_CONFIG is not set (start me with `git codex spawn`)")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("the MCP config: %w", err)
	}
	var cfg mcpConfig
	if err := json.Unmarshal(b, &cfg); err != nil {
		return fmt.Errorf("the MCP config %s: %w", path, err)
	}
	srv, ok := cfg.MCPServers["git-codex"]
	if !ok || srv.Env["CODEX_INSTANCE"] == "" {
		return fmt.Errorf("the MCP config %s names no git-codex server with a CODEX_INSTANCE", path)
	}
	a.id, a.token = expandEnv(srv.Env["CODEX_INSTANCE"], a.Getenv), expandEnv(srv.Env["CODEX_TOKEN"], a.Getenv)
	if envReference.MatchString(a.id) {
		return fmt.Errorf("the MCP config %s names %s, which is not in my environment (start me with `git codex spawn`)", path, a.id)
	}
	a.dir, err = os.Getwd()
	return err
}

// envReference is a ${VAR} or ${VAR:-default} in an MCP config's values.
var envReference = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}`)

// expandEnv expands ${VAR} and ${VAR:-default} in s as Claude Code does
// when it loads an MCP config (git codex's names ${CODEX_INSTANCE} and
// ${CODEX_TOKEN}, whose values are in the pane's environment): an unset
// variable takes its default, and without one stays as written.
func expandEnv(s string, getenv func(string) string) string {
	return envReference.ReplaceAllStringFunc(s, func(ref string) string {
		m := envReference.FindStringSubmatch(ref)
		if v := getenv(m[1]); v != "" {
			return v
		}
		if m[2] != "" {
			return m[2][2:]
		}
		return ref
	})
}

// self is what the stand-in needs of its own record.
type self struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Status   string `json:"status"`
	ReviewOf string `json:"review_of"`
}

// whoAmI asks git codex for the instance's record, again while it is
// STARTING: the spawn records it live a moment after its pane starts, and
// a review can be asked for only then. (A real agent CLI takes longer than
// that to boot.)
func (a *agent) whoAmI(ctx context.Context) (self, error) {
	var me self
	for try := 0; ; try++ {
		if err := a.call(ctx, "agent_get_status", map[string]any{}, &me); err != nil {
			return me, err
		}
		if me.Status != "STARTING" || try == 20 {
			return me, nil
		}
		select {
		case <-ctx.Done():
			return me, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// awaitReviewEnd asks git codex for the instance's record until it is no
// longer WAITING_REVIEW: the review loop delivers the feedback into the
// worktree first and then records the review as over, and an agent that
// read the file in between would ask for its next review too soon.
func (a *agent) awaitReviewEnd(ctx context.Context) error {
	for {
		var me self
		if err := a.call(ctx, "agent_get_status", map[string]any{}, &me); err != nil {
			return err
		}
		if me.Status != "WAITING_REVIEW" {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// idle reads the pane's input until it ends, saying what it got: an
// agent CLI that finished its work still answers.
func (a *agent) idle() int {
	for a.lines.Scan() {
		if line := strings.TrimSpace(a.lines.Text()); line != "" {
			fmt.Fprintf(a.Stdout, "(noted) %s\n", line)
		}
	}
	return 0
}

// code is the coding agent's script: write greet.sh, commit, ask for a
// review; on each nudge read REVIEW_FEEDBACK.md and either fix the script
// and ask again, or, once approved, open a pull request and finish.
func (a *agent) code(ctx context.Context) error {
	if err := a.commit(ctx, greetV1, "Add greet.sh, which greets the person it is given"); err != nil {
		return err
	}
	if err := a.requestReview(ctx, "greet.sh greets the person named on its command line"); err != nil {
		return err
	}
	// act on feedback when told (a nudge) or when it is already there:
	// the reviewer may deliver it while request_review is still running
	// here, and an agent that finds it then reads it, nudged or not
	handled := ""
	for {
		id := a.feedbackID(ctx)
		if id == "" || id == handled {
			if !a.lines.Scan() {
				return nil
			}
			line := strings.TrimSpace(a.lines.Text())
			if line == "" {
				continue
			}
			fmt.Fprintf(a.Stdout, "> %s\n", line)
			if id = a.feedbackID(ctx); id == "" || id == handled {
				fmt.Fprintln(a.Stdout, "(no new feedback to act on)")
				continue
			}
		}
		handled = id
		// the loop commits the feedback here before it records the
		// review as over: asking for the next one in between is refused
		// (INVALID_AGENT_STATE), so act once the record says ACTIVE
		if err := a.awaitReviewEnd(ctx); err != nil {
			return err
		}
		verdict, text, err := a.feedback()
		if err != nil {
			fmt.Fprintf(a.Stdout, "(no feedback to act on: %v)\n", err)
			continue
		}
		fmt.Fprintf(a.Stdout, "Feedback: %s: %s\n", verdict, text)
		switch verdict {
		case "needs_work":
			if err := a.commit(ctx, greetV2, "greet.sh: a usage message and exit status 2 without a name"); err != nil {
				return err
			}
			if err := a.requestReview(ctx, "greet.sh now refuses to run without a name"); err != nil {
				return err
			}
		case "approved":
			var pr struct {
				Number int    `json:"pr_number"`
				URL    string `json:"pr_url"`
			}
			err := a.call(ctx, "create_pull_request", map[string]any{
				"title":       "Add greet.sh",
				"description": "greet.sh greets the person named on its command line, and prints its usage without one.\n\nReviewed by git codex's review loop (see `git log --notes=codex-reviews`).",
			}, &pr)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.Stdout, "Opened pull request #%d: %s\n", pr.Number, pr.URL)
			return a.call(ctx, "agent_set_status", map[string]any{"status": "COMPLETED", "reason": fmt.Sprintf("pull request #%d opened", pr.Number)}, nil)
		}
	}
}

// commit writes greet.sh and commits it on the instance's branch.
func (a *agent) commit(ctx context.Context, content, message string) error {
	if err := os.WriteFile(filepath.Join(a.dir, greetFile), []byte(content), 0o755); err != nil {
		return err
	}
	if _, err := a.git(ctx, "add", greetFile); err != nil {
		return err
	}
	if _, err := a.git(ctx, "-c", "user.name="+a.id, "-c", "user.email="+a.id+"@agents.git-codex.invalid", "commit", "-q", "-m", message); err != nil {
		return err
	}
	head, err := a.git(ctx, "rev-parse", "--short", "HEAD")
	if err != nil {
		return err
	}
	fmt.Fprintf(a.Stdout, "Committed %s: %s\n", head, message)
	return nil
}

func (a *agent) requestReview(ctx context.Context, summary string) error {
	var r struct {
		Reviewer  string `json:"review_instance_id"`
		Iteration int    `json:"review_iteration"`
	}
	if err := a.call(ctx, "request_review", map[string]any{"completion_message": summary}, &r); err != nil {
		return err
	}
	fmt.Fprintf(a.Stdout, "Review %d requested from %s; waiting for its feedback.\n", r.Iteration, r.Reviewer)
	return nil
}

// feedbackID names the REVIEW_FEEDBACK.md committed at the branch's head
// (its blob), "" before any: each review's feedback is a new one. It is
// "" too while the review loop is still delivering it: the loop moves the
// branch first and then writes the file and its index entry here, and a
// stand-in that acted at the new head read the old file and committed
// over the loop's index update (index.lock: the feedback undelivered);
// the nudge follows the delivery.
func (a *agent) feedbackID(ctx context.Context) string {
	id, err := a.git(ctx, "rev-parse", "-q", "--verify", "HEAD:REVIEW_FEEDBACK.md")
	if err != nil {
		return ""
	}
	staged, err := a.git(ctx, "ls-files", "--stage", "--", "REVIEW_FEEDBACK.md")
	if f := strings.Fields(staged); err != nil || len(f) < 2 || f[1] != strings.TrimSpace(id) {
		return ""
	}
	return strings.TrimSpace(id)
}

// feedback reads the verdict and the text of REVIEW_FEEDBACK.md, as the
// review loop committed it into this worktree.
func (a *agent) feedback() (verdict, text string, err error) {
	b, err := os.ReadFile(filepath.Join(a.dir, "REVIEW_FEEDBACK.md"))
	if err != nil {
		return "", "", err
	}
	body := string(b)
	head, rest, _ := strings.Cut(body, "\n")
	verdict, ok := strings.CutPrefix(head, "# Review feedback: ")
	if !ok {
		return "", "", fmt.Errorf("REVIEW_FEEDBACK.md does not start with its verdict")
	}
	// the text is the first paragraph after the list of facts
	for _, p := range strings.Split(rest, "\n\n") {
		p = strings.TrimSpace(p)
		if p != "" && !strings.HasPrefix(p, "- ") && !strings.HasPrefix(p, "#") {
			text = p
			break
		}
	}
	return strings.TrimSpace(verdict), text, nil
}

// review is the reviewer's script: run greet.sh as a user would, without
// a name and with one, and send the verdict.
func (a *agent) review(ctx context.Context, coder string) error {
	fmt.Fprintf(a.Stdout, "Reviewing %s's work: running %s\n", coder, greetFile)
	noName, noNameErr := a.run(ctx, "sh", greetFile)
	withName, withNameErr := a.run(ctx, "sh", greetFile, "Ada")
	fb := map[string]any{}
	switch {
	case noNameErr == nil:
		fb["feedback_type"], fb["priority"] = "needs_work", "medium"
		fb["feedback"] = fmt.Sprintf("Run without a name, greet.sh prints %q and exits 0: a caller cannot tell that it forgot the name.", strings.TrimSpace(noName))
		fb["actionable_items"] = []string{"without exactly one non-empty name, print `usage: greet.sh NAME` to stderr and exit 2"}
	case withNameErr != nil || strings.TrimSpace(withName) != "Hello, Ada!":
		fb["feedback_type"], fb["priority"] = "needs_work", "high"
		fb["feedback"] = fmt.Sprintf("greet.sh Ada should print \"Hello, Ada!\"; it printed %q (%v).", strings.TrimSpace(withName), withNameErr)
		fb["actionable_items"] = []string{"greet the name given"}
	default:
		fb["feedback_type"] = "approved"
		fb["feedback"] = "greet.sh greets the name it is given and refuses, with its usage, to run without one. Ship it."
	}
	fmt.Fprintf(a.Stdout, "Verdict: %s\n", fb["feedback_type"])
	var sent struct {
		Commit string `json:"git_commit_hash"`
	}
	if err := a.call(ctx, "send_feedback", fb, &sent); err != nil {
		return err
	}
	fmt.Fprintf(a.Stdout, "Feedback delivered to %s as commit %.12s; my session ends now.\n", coder, sent.Commit)
	return nil
}

// run runs a command in the worktree and returns its standard output.
func (a *agent) run(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = a.dir
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	return out.String(), err
}

func (a *agent) git(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = a.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return strings.TrimSpace(string(out)), nil
}

// envelope is what `git codex call` prints.
type envelope struct {
	OK    bool            `json:"ok"`
	Data  json.RawMessage `json:"data"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// call runs `git codex call <tool> <args>` as this instance and decodes
// the result's data into out (if not nil).
func (a *agent) call(ctx context.Context, tool string, args any, out any) error {
	in, err := json.Marshal(args)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.Stdout, "● git codex call %s\n", tool)
	cmd := exec.CommandContext(ctx, a.Exe, "call", tool, string(in))
	cmd.Dir = a.dir
	cmd.Env = append(os.Environ(), "CODEX_INSTANCE="+a.id, "CODEX_TOKEN="+a.token)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var env envelope
	if err := json.Unmarshal(stdout.Bytes(), &env); err != nil {
		return fmt.Errorf("%s: %v: %s", tool, runErr, strings.TrimSpace(stderr.String()))
	}
	if !env.OK {
		if env.Error == nil {
			return fmt.Errorf("%s failed", tool)
		}
		return fmt.Errorf("%s refused: %s: %s", tool, env.Error.Code, env.Error.Message)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(env.Data, out)
}

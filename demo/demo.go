// Package demo is `git codex demo`: the whole review loop in one command,
// with no API key. In a fresh repository it spawns a coding agent, which
// commits and asks for a review; the reviewer git codex spawns for it
// sends needs_work; the coder fixes its work and asks again; the reviewer
// approves; the coder opens a pull request on a local stand-in of GitHub.
// The agents are a stand-in too (RunAgent): a fixed script started by the
// same launcher contract as Claude Code, Codex or Gemini CLI, in real tmux
// panes and worktrees, calling the real tools. Every step is printed as
// its commit lands on refs/codex/state.
package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/github/githubtest"
	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
)

// The repository the demo pretends to be, on the stand-in GitHub.
const (
	ghRepo    = "git-codex-demo/greeter"
	originURL = "https://github.com/" + ghRepo + ".git"
	// forgeDir is where, inside the demo repository's .git, the branches
	// pushed to origin land.
	forgeDir = "demo-forge.git"
	// launcher is the name of the stand-in's launcher (agent.demo.command,
	// in the demo repository's git config).
	launcher = "demo"
	// task is the coding agent's task.
	task = "Add greet.sh, a script that greets the person named on its command line.\n\n" +
		"Commit it on your branch and ask for a review (request_review); act on the feedback; " +
		"once it is approved, open a pull request (create_pull_request) and set your status COMPLETED."
	// DefaultTimeout bounds the loop (it takes seconds).
	DefaultTimeout = time.Minute
)

// Options are what the demo runs with.
type Options struct {
	// Dir is where the repository goes (new or empty); "" is a fresh
	// temporary directory. Instances' worktrees go beside it, as in any
	// repository (<Dir>.codex-worktrees).
	Dir string
	// Keep leaves the repository and its worktrees; otherwise nothing of
	// the demo is left behind.
	Keep bool
	// Timeout bounds the loop (DefaultTimeout if zero).
	Timeout time.Duration
	// Exe is the git-codex executable: the launcher runs `<Exe> demo-agent`.
	Exe string
	// Registry is every tool; the demo gives it its private tmux server.
	Registry *tools.Registry
	// Out gets the demo's story.
	Out io.Writer
	// UI, if set, starts the web page over the demo's repository while
	// it runs and returns its URL and how to stop it.
	UI func(ctx context.Context, st *gitstate.Store, reg *tools.Registry, caller string) (url string, stop func(), err error)
}

// Result is what the demo did.
type Result struct {
	// Repo is the repository (gone unless Keep).
	Repo string
	// Coder is the coding instance's id.
	Coder string
	// PullRequest is the pull request the coder opened.
	PullRequest githubtest.PullRequest
}

// Run runs the demo: the loop, then the removal of everything it made
// (unless Keep), also when the loop fails or ctx ends.
func Run(ctx context.Context, o Options) (res Result, err error) {
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if strings.ContainsFunc(o.Exe, func(r rune) bool { return strings.ContainsRune(" \t\n'\"\\$`;&|<>*?()[]{}!#~", r) }) {
		return res, fmt.Errorf("the git-codex executable's path %q has characters a launcher's command line cannot hold; install git-codex on a plain path", o.Exe)
	}
	ws, err := newWorkspace(o.Dir)
	if err != nil {
		return res, err
	}
	res.Repo = ws.repo
	cleanup := context.WithoutCancel(ctx)
	defer func() {
		if o.Keep {
			return
		}
		if rerr := ws.remove(); rerr != nil && err == nil {
			err = rerr
		}
	}()
	gh := githubtest.New()
	defer gh.Close()
	token := "demo_" + randomHex(16)
	gh.RequireToken(token)
	tm, err := startTmux(ctx, map[string]string{"GH_TOKEN": token})
	if err != nil {
		return res, err
	}
	defer func() {
		if serr := tm.stop(cleanup); serr != nil && err == nil {
			err = serr
		}
	}()
	email, err := makeRepo(ctx, ws.repo)
	if err != nil {
		return res, err
	}
	st, err := gitstate.Open(ws.repo, gitstate.Options{})
	if err != nil {
		return res, err
	}
	defer st.Close()
	caller := tools.HumanID(email)
	env := o.Registry.Env()
	env.Tmux = tm.runner
	reg := o.Registry.WithEnv(env)

	out := o.Out
	fmt.Fprintln(out, "git codex demo: a coding agent and a reviewer, both stand-ins (a fixed script: no model, no API key),")
	fmt.Fprintln(out, "go round the review loop and open a pull request.")
	fmt.Fprintln(out)
	where := "removed at the end; --keep keeps it"
	if o.Keep {
		where = "kept"
	}
	fmt.Fprintf(out, "  repository  %s (%s)\n", ws.repo, where)
	fmt.Fprintf(out, "  GitHub      a local stand-in at %s for %s\n", gh.URL, ghRepo)
	fmt.Fprintf(out, "  agents      tmux panes on a private server; watch one: tmux %s attach -t codex-<instance id>\n", strings.Join(tm.runner.Args(), " "))

	if _, err := reg.Init(ctx, st, tools.Origin{ID: caller}); err != nil {
		return res, err
	}
	var stopUI func()
	if o.UI != nil {
		url, stop, err := o.UI(ctx, st, reg, caller)
		if err != nil {
			return res, fmt.Errorf("the web page: %w", err)
		}
		stopUI = stop
		fmt.Fprintf(out, "  web page    %s (live while the demo runs)\n", url)
	}
	defer func() {
		if stopUI != nil {
			stopUI()
		}
	}()
	fmt.Fprintln(out)
	fmt.Fprintln(out, "Each line is one commit on refs/codex/state, printed as it lands:")
	w := &watcher{st: st, out: out}
	call := func(tool string, args map[string]any) (json.RawMessage, error) {
		in, _ := json.Marshal(args)
		r := reg.CallAs(ctx, st, tools.Origin{ID: caller}, tool, in)
		w.poll(ctx)
		if !r.OK {
			return nil, fmt.Errorf("%s: %s: %s", tool, r.Error.Code, r.Error.Message)
		}
		return json.Marshal(r.Data)
	}
	// the launcher and the GitHub endpoint are this machine's settings:
	// the person's config_set writes them to the demo repository's git
	// config (codex.agent.demo.command, codex.github.apiUrl), never to
	// the shared state (docs/SECURITY.md)
	for _, kv := range [][2]string{
		{"agent." + launcher + ".command", o.Exe + " demo-agent"},
		{"github.api_url", gh.URL},
	} {
		if _, err := call("config_set", map[string]any{"key": kv[0], "value": kv[1]}); err != nil {
			return res, err
		}
	}
	data, err := call("spawn", map[string]any{"type": "coding", "prompt": task, "agent": launcher})
	if err != nil {
		return res, err
	}
	var spawned instance.Spawned
	if err := json.Unmarshal(data, &spawned); err != nil {
		return res, err
	}
	res.Coder = spawned.InstanceID
	if err := w.await(ctx, o.Timeout); err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(out, "\nInterrupted: stopping the agents and removing what the demo made.")
			return res, errors.New("demo interrupted")
		}
		fmt.Fprintf(out, "\nThe loop did not finish: %v\n", err)
		w.showPanes(cleanup, tm)
		return res, err
	}
	// a reviewer ends its own session a second after its feedback: let it
	tm.awaitOnly(ctx, "codex-"+res.Coder, 5*time.Second)
	prs := gh.PullRequests(ghRepo)
	if len(prs) == 0 {
		return res, errors.New("the coder finished, but the stand-in GitHub holds no pull request")
	}
	res.PullRequest = prs[len(prs)-1]
	pr := res.PullRequest
	// the stand-in GitHub stops with the demo, so its URL is shown as
	// what GitHub would have answered, not as a page to open
	fmt.Fprintf(out, "\nPull request #%d opened on the stand-in GitHub (%s into %s; it answered %s, gone when the demo ends).\n", pr.Number, pr.Head, pr.Base, pr.URL)
	w.explain(out, ws, res.Coder, o.Keep)
	return res, nil
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// workspace is where the demo's repository and its worktrees go.
type workspace struct {
	root      string // a temporary directory holding both, or ""
	repo      string
	worktrees string // <repo>.codex-worktrees, the default of worktree.dir
	made      bool   // repo was made by the demo (not an empty --dir)
}

// newWorkspace picks the directories: a fresh temporary one, or dir (new
// or empty) and the worktrees' directory beside it (new).
func newWorkspace(dir string) (*workspace, error) {
	if dir == "" {
		root, err := os.MkdirTemp("", "git-codex-demo-")
		if err != nil {
			return nil, fmt.Errorf("a directory for the demo: %w", err)
		}
		repo := filepath.Join(root, "greeter")
		return &workspace{root: root, repo: repo, worktrees: repo + ".codex-worktrees", made: true}, nil
	}
	repo, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	ws := &workspace{repo: repo, worktrees: repo + ".codex-worktrees"}
	entries, err := os.ReadDir(repo)
	switch {
	case errors.Is(err, os.ErrNotExist):
		ws.made = true
	case err != nil:
		return nil, fmt.Errorf("--dir %s: %w", dir, err)
	case len(entries) > 0:
		return nil, tools.Errorf(tools.InvalidInput, "--dir %s is not empty; name a new or empty directory", dir)
	}
	if _, err := os.Stat(ws.worktrees); err == nil {
		return nil, tools.Errorf(tools.InvalidInput, "%s already exists, and the demo's worktrees go there; remove it or pick another --dir", ws.worktrees)
	}
	return ws, nil
}

// remove removes what the demo made.
func (ws *workspace) remove() error {
	if ws.root != "" {
		return os.RemoveAll(ws.root)
	}
	errs := []error{os.RemoveAll(ws.worktrees)}
	if ws.made {
		errs = append(errs, os.RemoveAll(ws.repo))
	} else if entries, err := os.ReadDir(ws.repo); err == nil {
		for _, e := range entries {
			errs = append(errs, os.RemoveAll(filepath.Join(ws.repo, e.Name())))
		}
	}
	return errors.Join(errs...)
}

// makeRepo makes the demo's repository: one commit on main, an origin
// naming the stand-in GitHub's repository, and an identity (the person's,
// else the demo's own). It returns the person's email.
func makeRepo(ctx context.Context, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return strings.TrimSpace(string(out)), nil
	}
	if _, err := git("init", "-q", "-b", "main"); err != nil {
		return "", err
	}
	// the agents commit here: no signing prompt may stop them
	settings := [][2]string{{"commit.gpgsign", "false"}}
	if name, _ := git("config", "user.name"); name == "" {
		settings = append(settings, [2]string{"user.name", "git codex demo"})
	}
	email, _ := git("config", "user.email")
	if email == "" {
		email = "demo@git-codex.invalid"
		settings = append(settings, [2]string{"user.email", email})
	}
	for _, kv := range settings {
		if _, err := git("config", kv[0], kv[1]); err != nil {
			return "", err
		}
	}
	readme := "# greeter\n\nA tiny project for `git codex demo`: a coding agent adds greet.sh, a reviewer reviews it.\n"
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(readme), 0o644); err != nil {
		return "", err
	}
	for _, args := range [][]string{
		{"add", "README.md"},
		{"commit", "-q", "-m", "Start greeter"},
		{"remote", "add", "origin", originURL},
		// origin names the stand-in's repository; its branches go to a
		// bare repository inside .git (removed with the demo), as
		// create_pull_request pushes a branch before it opens its
		// pull request
		{"init", "-q", "--bare", filepath.Join(".git", forgeDir)},
		{"config", "remote.origin.pushurl", filepath.Join(dir, ".git", forgeDir)},
		{"push", "-q", "origin", "main"},
	} {
		if _, err := git(args...); err != nil {
			return "", err
		}
	}
	return email, nil
}

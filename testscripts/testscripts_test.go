// Package testscripts holds git codex's end-to-end tests: txtar scripts in
// testdata/ that drive the real binary, through git's own dispatch
// (`exec git codex ...`), in real repositories.
package testscripts

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/cmd/git-codex/app"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tmux"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain makes the test binary double as git-codex: testscript puts a
// "git-codex" program on the scripts' PATH that runs app.Main.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"git-codex":   func() { os.Exit(app.Main(os.Args, os.Stdin, os.Stdout, os.Stderr)) },
		"fake-claude": func() { os.Exit(fakeClaude()) },
	})
}

// TestScripts runs every testdata/*.txtar. Each script starts in an empty
// $WORK with a private HOME whose git config names a test identity, so
// `git codex` acts as human:tester@example.com unless told otherwise.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata",
		RequireExplicitExec: true,
		Setup:               setup,
		Cmds:                customCommands(),
		Condition:           mcpConditions,
		// UPDATE_SCRIPTS=1 rewrites the files that cmp compares with
		// (golden lists) in the scripts, for a change that means them to
		// change: review the diff.
		UpdateScripts: os.Getenv("UPDATE_SCRIPTS") == "1",
	})
}

func setup(e *testscript.Env) error {
	home := filepath.Join(e.WorkDir, ".home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	// git codex's defaults, codex.reads included: reads and refusals are
	// recorded on this machine's reads ref, and a script that reads their
	// audit records looks there (or sets codex.reads=state, to test that
	// mode).
	gitconfig := "[user]\n\tname = Tester\n\temail = tester@example.com\n[init]\n\tdefaultBranch = main\n[gc]\n\tautoDetach = false\n"
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(gitconfig), 0o644); err != nil {
		return err
	}
	e.Setenv("HOME", home)
	e.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	e.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	e.Setenv("CODEX_INSTANCE", "")
	e.Setenv("CODEX_TOKEN", "")
	// agents' tmux sessions go to a private server: a short directory (a
	// socket path must fit in ~100 bytes) whose server dies with the test
	tmuxDir, err := os.MkdirTemp("", "cxt")
	if err != nil {
		return err
	}
	e.Setenv("TMUX_TMPDIR", tmuxDir)
	e.Defer(func() {
		kill := exec.Command("tmux", "kill-server")
		kill.Env = append(os.Environ(), "TMUX_TMPDIR="+tmuxDir)
		kill.Run()
		// what ran in its panes and outlives the server's SIGHUP (Gemini
		// CLI catches it) after a script that failed before its kill:
		// every such process has the script's TMUX_TMPDIR
		tmux.EndProcessesWithEnv("TMUX_TMPDIR="+tmuxDir, 2*time.Second)
		os.RemoveAll(tmuxDir)
	})
	// $REPO is the source tree, for scripts that check what `make`
	// installs from it.
	repo, err := filepath.Abs("..")
	if err != nil {
		return err
	}
	e.Setenv("REPO", repo)
	// nothing a script runs may reach GitHub itself: no token or
	// repository from the environment, gh's config private and gh never
	// run for a token, and every request to a host that is not this
	// machine sent to a proxy that does not exist (Go never proxies
	// loopback addresses, so the local stand-in, `github start`, is
	// reached directly)
	for _, k := range []string{"GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "GH_REPO", "GH_HOST", "CODEX_GITHUB_API_URL", "NO_PROXY", "no_proxy"} {
		e.Setenv(k, "")
	}
	e.Setenv("GH_CONFIG_DIR", filepath.Join(home, ".config", "gh"))
	e.Setenv("GH_PATH", "/nonexistent/gh")
	for _, k := range []string{"HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"} {
		e.Setenv(k, "http://127.0.0.1:9")
	}
	e.Values[githubKey{}] = &githubHolder{}
	e.Values[modelAPIKey{}] = &modelAPIHolder{}
	// git codex starts git's repack and maintenance in the background
	// (gitstate's maintain): wait for them before the work directory is
	// removed, so none writes into a directory being deleted
	e.Defer(func() { waitForMaintenance(e.WorkDir) })
	return nil
}

// waitForMaintenance waits for the background git maintenance that git
// codex started in any repository under dir.
func waitForMaintenance(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == "codex" {
			if _, err := os.Stat(filepath.Join(filepath.Dir(p), "objects")); err == nil {
				gitstatetest.WaitForLocks(filepath.Dir(p))
			}
			return filepath.SkipDir
		}
		return nil
	})
}

package testscripts

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestSpawnKilledAnyTime: `git codex spawn` and `request_review` killed
// with SIGKILL (with their process group) at random moments leave nothing
// that `git codex cleanup` does not find: afterwards every instance is
// either running with its worktree, branch and session, or ended with none
// of them, and no worktree, codex/* branch or tmux session exists that no
// record names.
func TestSpawnKilledAnyTime(t *testing.T) {
	if testing.Short() {
		t.Skip("kills spawns for a while")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not on PATH")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for _, name := range []string{"git-codex", "fake-claude"} {
		if err := os.Symlink(self, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	work := t.TempDir()
	// git codex's background repacks outlive the commands that started
	// them: wait for them before the directory is removed
	t.Cleanup(func() { waitForMaintenance(work) })
	home := filepath.Join(work, ".home")
	os.MkdirAll(home, 0o755)
	tmuxDir, err := os.MkdirTemp("", "cxk")
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+home,
		"GIT_CONFIG_NOSYSTEM=1", "TMUX_TMPDIR="+tmuxDir, "CODEX_INSTANCE=")
	t.Cleanup(func() {
		kill := exec.Command("tmux", "kill-server")
		kill.Env = env
		kill.Run()
		os.RemoveAll(tmuxDir)
	})
	cmdIn := func(dir string, args ...string) *exec.Cmd {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = dir, env
		// testscript's Main runs fake-claude when the binary is called so
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return cmd
	}
	run := func(dir string, args ...string) string {
		t.Helper()
		out, err := cmdIn(dir, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run(work, "git", "config", "--global", "user.email", "tester@example.com")
	run(work, "git", "config", "--global", "user.name", "tester")
	repo := filepath.Join(work, "repo")
	run(work, "git", "init", "-q", repo)
	run(repo, "git", "commit", "-q", "--allow-empty", "-m", "base")
	run(repo, "git-codex", "init")
	run(repo, "git-codex", "config", "set", "agent.claude.command", "fake-claude")

	// how long a whole spawn takes here, so that kills land all along it
	start := time.Now()
	run(repo, "git-codex", "spawn", "coding", "--name", "timed", "task")
	span := time.Since(start)
	run(repo, "git-codex", "kill", "timed")
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))
	killAt := func(cmd *exec.Cmd, d time.Duration) {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(d)
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}
	for round := 0; round < 16; round++ {
		name := fmt.Sprintf("c%d", round)
		killAt(cmdIn(repo, "git-codex", "spawn", "coding", "--name", name, "task"), time.Duration(r.Int64N(int64(span))))
		// a coder that did start asks for a review, killed midway too
		var a struct {
			Status   string `json:"status"`
			Worktree string `json:"worktree"`
		}
		out, _ := cmdIn(repo, "git-codex", "agent", "show", name, "--json").Output()
		json.Unmarshal(out, &a)
		if a.Status == "ACTIVE" {
			run(a.Worktree, "git", "commit", "-q", "--allow-empty", "-m", "work")
			killAt(cmdIn(repo, "git-codex", "--as", name, "call", "request_review", "{}"), time.Duration(r.Int64N(int64(span))))
		}
	}
	// reap records the spawns that died; a coder waits only on a
	// reviewer that runs
	run(repo, "git-codex", "reap")
	var list struct {
		Instances []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"instances"`
	}
	json.Unmarshal([]byte(run(repo, "git-codex", "ps", "--json")), &list)
	seen := map[string]int{}
	for _, in := range list.Instances {
		seen[in.Status]++
	}
	t.Logf("a spawn takes %v; after the kills and a reap: %v", span, seen)
	if seen["STARTING"] > 0 || seen["WAITING_REVIEW"] != seen["REVIEWING"] {
		t.Errorf("after reap: %v; want no STARTING instance, and a REVIEWING reviewer for each coder WAITING_REVIEW", seen)
	}
	// end every instance, then clean up: nothing may be left
	for _, in := range list.Instances {
		if in.Status != "FAILED" && in.Status != "TERMINATED" && in.Status != "STARTING" {
			run(repo, "git-codex", "kill", in.ID)
		}
	}
	reaped := run(repo, "git-codex", "reap", "--json")
	cleaned := run(repo, "git-codex", "cleanup", "--json")
	if out := run(repo, "git-codex", "ps", "--json"); strings.Contains(out, `"id"`) {
		// what reap and cleanup said of it (each item's error) tells why
		t.Errorf("instances left after cleanup:\n%s\nreap said:\n%s\ncleanup said:\n%s", out, reaped, cleaned)
	}
	if out := run(repo, "git", "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", out)
	}
	if out := run(repo, "git", "branch", "--list", "codex/*"); out != "" {
		t.Errorf("branches left:\n%s", out)
	}
	sessions, _ := cmdIn(repo, "tmux", "list-sessions", "-F", "#{session_name}").Output()
	if s := strings.TrimSpace(string(sessions)); s != "" {
		t.Errorf("tmux sessions left:\n%s", s)
	}
	if entries, _ := os.ReadDir(repo + ".codex-worktrees"); len(entries) != 0 {
		t.Errorf("worktree directories left: %v", entries)
	}
	// the writes above started git's repack in the background
	// (gitstate's maintain): fsck lists loose objects and then reads them,
	// so a repack's prune-packed beside it reports a packed object's loose
	// copy as missing (seen in CI); wait for it, as a person would see fsck
	// run after git's maintenance
	if err := gitstatetest.WaitForLocks(filepath.Join(repo, ".git")); err != nil {
		t.Fatal(err)
	}
	run(repo, "git", "fsck", "--no-dangling")
}

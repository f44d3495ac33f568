package testscripts

import (
	"bytes"
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
)

// TestSyncKilledAnyTime: `git codex sync` killed with SIGKILL at random
// moments (with its whole process group: the git fetch and push it runs die
// too, as when an agent's terminal goes away) never loses a local event,
// never leaves the state unreadable, and never leaves a lock that stops
// the next sync: afterwards both clones sync to the identical state holding
// every mail either side sent.
func TestSyncKilledAnyTime(t *testing.T) {
	if testing.Short() {
		t.Skip("kills syncs for a few seconds")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(self, filepath.Join(bin, "git-codex")); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	home := filepath.Join(work, ".home")
	os.MkdirAll(home, 0o755)
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+home,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	run := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run(work, "git", "config", "--global", "user.email", "tester@example.com")
	run(work, "git", "config", "--global", "user.name", "tester")
	run(work, "git", "init", "-q", "--bare", "remote.git")
	a, b := filepath.Join(work, "a"), filepath.Join(work, "b")
	run(work, "git", "init", "-q", a)
	run(a, "git", "commit", "-q", "--allow-empty", "-m", "code")
	run(a, "git", "remote", "add", "origin", filepath.Join(work, "remote.git"))
	run(a, "git-codex", "init", "--remote", "origin")
	run(a, "git-codex", "agent", "add", "w1", "--type", "worker")
	run(a, "git-codex", "sync")
	run(work, "git", "clone", "-q", filepath.Join(work, "remote.git"), b)
	run(b, "git-codex", "sync")

	sent := map[string]bool{}
	send := func(dir, subject string) {
		var r struct {
			MailID string `json:"mail_id"`
		}
		// stdout only: w1 presents no token, and stderr says so
		cmd := exec.Command("git-codex", "--as", "w1", "mail", "send", "--to", "w1", "--subject", subject, "--body", "x", "--json")
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("mail send in %s: %v\n%s", dir, err, out)
		}
		json.Unmarshal(out, &r)
		if r.MailID == "" {
			t.Fatalf("mail send in %s printed no id", dir)
		}
		sent[r.MailID] = true
	}
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	killed := 0
	for round := 0; round < 12; round++ {
		send(b, fmt.Sprintf("b%d", round))
		run(b, "git-codex", "sync")
		send(a, fmt.Sprintf("a%d", round))
		cmd := exec.Command("git-codex", "sync")
		cmd.Dir, cmd.Env = a, env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(r.IntN(400)) * time.Millisecond) // a merging sync takes ~300 ms here
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			killed++ // killed mid-sync, not after it finished
		}
		// the state is readable at once, and holds A's own mail
		run(a, "git", "rev-parse", "--verify", "refs/codex/state^{tree}")
		inbox := run(a, "git-codex", "--as", "w1", "mail", "inbox", "--json")
		if !strings.Contains(inbox, fmt.Sprintf(`"subject": "a%d"`, round)) {
			t.Fatalf("round %d: A lost its own mail after a killed sync:\n%s", round, inbox)
		}
	}
	// nothing left behind stops the next syncs; both converge
	for _, dir := range []string{a, b, a} {
		run(dir, "git-codex", "sync")
	}
	if ta, tb := run(a, "git", "rev-parse", "refs/codex/state^{tree}"), run(b, "git", "rev-parse", "refs/codex/state^{tree}"); ta != tb {
		t.Fatalf("trees differ after syncing: A %s, B %s", ta, tb)
	}
	for _, dir := range []string{a, b} {
		inbox := run(dir, "git-codex", "--as", "w1", "mail", "inbox", "--json")
		for id := range sent {
			if !strings.Contains(inbox, id) {
				t.Errorf("%s lost mail %s", filepath.Base(dir), id)
			}
		}
		run(dir, "git", "fsck", "--no-dangling", "--connectivity-only")
	}
	t.Logf("%d of 12 syncs killed mid-way, %d mails", killed, len(sent))
}

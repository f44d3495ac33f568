package testscripts

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/tmux"
	"github.com/rogpeppe/go-internal/testscript"
)

// tmuxCommands are the script commands of the instance scripts:
//
//	waitpane SESSION REGEXP
//	    polls the tmux session's pane (on the script's private server)
//	    for up to 10 seconds until its text matches REGEXP, and on while
//	    the pane's program is still at work (up to a minute: a real CLI
//	    on a loaded machine draws slowly). With !, the
//	    session must be gone or never match within a second.
//
//	noprocs [-wait SECONDS] TEXT
//	    fails if a live process of this script (other than the test's
//	    own) has TEXT in its command line or its environment: what a
//	    command that must leave nothing running (git codex demo) left
//	    behind. A process is the script's when its environment has the
//	    script's HOME, so scripts running side by side, with instances of
//	    the same name, never see each other's. Processes in
//	    a tmux pane have TMUX=<socket>,... in theirs. With -wait, such
//	    processes may take that long to go (a session killed a moment
//	    after a call, by a detached process).
func tmuxCommands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"waitpane": cmdWaitPane,
		"noprocs":  cmdNoProcs,
	}
}

func cmdNoProcs(ts *testscript.TestScript, neg bool, args []string) {
	var wait time.Duration
	if len(args) == 3 && args[0] == "-wait" {
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		wait, args = time.Duration(n)*time.Second, args[2:]
	}
	if len(args) != 1 || neg {
		ts.Fatalf("usage: noprocs [-wait SECONDS] TEXT")
	}
	if _, err := os.ReadDir("/proc"); err != nil {
		ts.Logf("noprocs: no /proc (%v); nothing checked", err)
		return
	}
	home := "HOME=" + ts.Getenv("HOME") + "\x00"
	left := procsWith(args[0], home)
	for deadline := time.Now().Add(wait); len(left) > 0 && time.Now().Before(deadline); left = procsWith(args[0], home) {
		time.Sleep(100 * time.Millisecond)
	}
	if len(left) > 0 {
		ts.Fatalf("noprocs: processes left with %s:\n%s", args[0], strings.Join(left, "\n"))
	}
}

// procsWith lists the live processes (other than this one) whose
// environment holds mine ("HOME=<dir>\x00") and which have text in their
// command line or environment, as "pid command line".
func procsWith(text, mine string) []string {
	entries, _ := os.ReadDir("/proc")
	var left []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil || zombie(stat) {
			continue
		}
		if env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ")); err != nil || !bytes.Contains(env, []byte(mine)) {
			continue // another script's, or another user's
		}
		for _, f := range []string{"cmdline", "environ"} {
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), f))
			if err == nil && bytes.Contains(b, []byte(text)) {
				cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
				left = append(left, fmt.Sprintf("%d %s", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
				break
			}
		}
	}
	return left
}

// paneBusyCap bounds waitpane's wait for a pane whose program is still
// at work.
const paneBusyCap = 60 * time.Second

// paneBusy reports whether waitpane may wait on past its 10 s: the pane's
// program is still at work (some process of its pane running, not
// waiting: tmux.PaneAsleep), as a real CLI drawing a screen on a loaded
// machine is (Claude Code took more than 10 s to draw its settings
// panel's search box under load), until paneBusyCap from begun. A program
// that waits with the screen still not matching fails at once.
func paneBusy(ts *testscript.TestScript, session string, begun time.Time) bool {
	if time.Since(begun) > paneBusyCap {
		return false
	}
	cmd := exec.Command("tmux", "display-message", "-p", "-t", "="+session+":", "#{pane_pid}")
	cmd.Env = append(os.Environ(), "TMUX_TMPDIR="+ts.Getenv("TMUX_TMPDIR"))
	out, err := cmd.Output()
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return false
	}
	_, asleep, known := tmux.PaneAsleep(pid)
	return known && !asleep
}

// zombie reports a process that has exited and waits to be reaped.
func zombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

func cmdWaitPane(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: waitpane SESSION REGEXP")
	}
	re, err := regexp.Compile(args[1])
	if err != nil {
		ts.Fatalf("waitpane: %v", err)
	}
	wait := 10 * time.Second
	if neg {
		wait = time.Second
	}
	var screen []byte
	begun := time.Now()
	for deadline := begun.Add(wait); time.Now().Before(deadline) || !neg && paneBusy(ts, args[0], begun); time.Sleep(50 * time.Millisecond) {
		cmd := exec.Command("tmux", "capture-pane", "-p", "-J", "-S", "-200", "-t", "="+args[0]+":")
		cmd.Env = append(os.Environ(), "TMUX_TMPDIR="+ts.Getenv("TMUX_TMPDIR"))
		screen, err = cmd.Output()
		if err == nil && re.Match(screen) {
			if neg {
				ts.Fatalf("waitpane: %s shows %q:\n%s", args[0], args[1], screen)
			}
			return
		}
	}
	if !neg {
		ts.Fatalf("waitpane: %s never showed %q; screen:\n%s", args[0], args[1], screen)
	}
}

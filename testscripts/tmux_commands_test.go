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

	"github.com/rogpeppe/go-internal/testscript"
)

// tmuxCommands are the script commands of the instance scripts:
//
//	waitpane SESSION REGEXP
//	    polls the tmux session's pane (on the script's private server)
//	    for up to 10 seconds until its text matches REGEXP. With !, the
//	    session must be gone or never match within a second.
//
//	noprocs TEXT
//	    fails if a live process (other than the test's own) has TEXT in
//	    its command line or its environment: what a command that must
//	    leave nothing running (git codex demo) left behind. Processes in
//	    a tmux pane have TMUX=<socket>,... in theirs.
func tmuxCommands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"waitpane": cmdWaitPane,
		"noprocs":  cmdNoProcs,
	}
}

func cmdNoProcs(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: noprocs TEXT")
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		ts.Logf("noprocs: no /proc (%v); nothing checked", err)
		return
	}
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
		for _, f := range []string{"cmdline", "environ"} {
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), f))
			if err == nil && bytes.Contains(b, []byte(args[0])) {
				cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
				left = append(left, fmt.Sprintf("%d %s", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
				break
			}
		}
	}
	if len(left) > 0 {
		ts.Fatalf("noprocs: processes left with %s:\n%s", args[0], strings.Join(left, "\n"))
	}
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
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
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

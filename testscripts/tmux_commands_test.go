package testscripts

import (
	"os"
	"os/exec"
	"regexp"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// tmuxCommands are the script commands of the instance scripts:
//
//	waitpane SESSION REGEXP
//	    polls the tmux session's pane (on the script's private server)
//	    for up to 10 seconds until its text matches REGEXP. With !, the
//	    session must be gone or never match within a second.
func tmuxCommands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"waitpane": cmdWaitPane,
	}
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

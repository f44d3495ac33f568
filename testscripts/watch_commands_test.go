package testscripts

import (
	"os/exec"
	"regexp"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// watchCommands are the script commands of the watcher's scripts:
//
//	waitstate PATH REGEXP
//	    polls the record at PATH in the state of the repository around
//	    the script's directory (git cat-file -p refs/codex/state:PATH)
//	    for up to 60 seconds until it matches REGEXP: what a watcher
//	    running in the background records after its pane work, which
//	    waits on a real agent CLI's pane (instance.Nudge allows it tens of
//	    seconds on a busy machine). It returns as soon as it matches.
func watchCommands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"waitstate": cmdWaitState,
	}
}

func cmdWaitState(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: waitstate PATH REGEXP")
	}
	re, err := regexp.Compile(args[1])
	if err != nil {
		ts.Fatalf("waitstate: %v", err)
	}
	var out []byte
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		cmd := exec.Command("git", "cat-file", "-p", "refs/codex/state:"+args[0])
		cmd.Dir = ts.MkAbs(".")
		out, err = cmd.Output()
		if err == nil && re.Match(out) {
			return
		}
	}
	ts.Fatalf("waitstate: %s never matched %q; last:\n%s", args[0], args[1], out)
}

package testscripts

import (
	"os/exec"
	"strings"

	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/rogpeppe/go-internal/testscript"
)

// maintenanceCommands are the script commands about git's housekeeping:
//
//	waitmaint
//	    waits for the background repack and maintenance git codex started
//	    in the repository of the current directory (at most a minute). A
//	    `git fsck` beside a repack that deletes packs reads a pack gone
//	    ("packfile ... cannot be accessed"), as it does beside git's own
//	    detached gc --auto: a script checks the repository with fsck
//	    after this.
func maintenanceCommands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"waitmaint": cmdWaitMaint,
	}
}

func cmdWaitMaint(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: waitmaint")
	}
	cmd := exec.Command("git", "rev-parse", "--path-format=absolute", "--git-common-dir")
	cmd.Dir = ts.MkAbs(".")
	out, err := cmd.Output()
	if err != nil {
		ts.Fatalf("waitmaint: no repository here: %v", err)
	}
	ts.Check(gitstatetest.WaitForLocks(strings.TrimSpace(string(out))))
}

package builtin_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
)

// readOnlyGit makes dir's .git unwritable until the test ends: by mode bits
// for an ordinary user, and with the immutable attribute for root (whom
// mode bits do not stop). It skips the test where neither works.
func readOnlyGit(t *testing.T, dir string) {
	t.Helper()
	git := filepath.Join(dir, ".git")
	if os.Geteuid() != 0 {
		if out, err := exec.Command("chmod", "-R", "a-w", git).CombinedOutput(); err != nil {
			t.Skipf("chmod: %v %s", err, out)
		}
		t.Cleanup(func() { exec.Command("chmod", "-R", "u+w", git).Run() })
		return
	}
	if out, err := exec.Command("chattr", "-R", "+i", git).CombinedOutput(); err != nil {
		exec.Command("chattr", "-R", "-i", git).Run()
		t.Skipf("cannot make .git read-only for root here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-R", "-i", git).Run() })
}

// TestReadOnlyRepositoryAnswersReads is issue 16 item 12: on a read-only
// .git every call failed, reads too, because every call commits its audit
// record. Reads are answered without it, and say so; calls that change the
// state are refused with READ_ONLY.
func TestReadOnlyRepositoryAnswersReads(t *testing.T) {
	e := newEnv(t)
	e.ok(human, "agent_register", `{"id":"w1","type":"worker"}`)
	e.ok("w1", "mail_send", `{"to_human":true,"subject":"s","body":"b"}`)
	tip := gitstatetest.Git(t, e.dir, "rev-parse", gitstate.RefState)
	readOnlyGit(t, e.dir)

	for _, c := range []struct{ caller, tool, args string }{
		{human, "agent_list", `{}`},
		{human, "mail_list_inbox", `{}`},
		{human, "config_get", `{"key":"mail.max_body_bytes"}`},
		{"w1", "task_list", `{}`},
	} {
		r := e.call(c.caller, c.tool, c.args)
		if !r.OK || !strings.Contains(r.Notice, "without its audit record") || r.Commit != "" {
			t.Errorf("%s: %+v", c.tool, r)
		}
	}
	if r := e.ok(human, "mail_list_inbox", `{}`); r["count"].(float64) != 1 {
		t.Errorf("inbox = %v", r)
	}
	// a refusal is answered too, unrecorded
	if r := e.call("w1", "agent_list", `{}`); r.OK || r.Error.Code != tools.PermissionDenied || r.Notice == "" {
		t.Errorf("refusal: %+v", r)
	}
	// a change cannot be made
	for _, c := range []struct{ caller, tool, args string }{
		{"w1", "mail_send", `{"to_human":true,"subject":"s","body":"b"}`},
		{human, "task_create", `{"title":"t","description":"d"}`},
	} {
		if r := e.call(c.caller, c.tool, c.args); r.OK || r.Error.Code != tools.ReadOnly {
			t.Errorf("%s on a read-only repository: %+v", c.tool, r)
		}
	}
	if got := gitstatetest.Git(t, e.dir, "rev-parse", gitstate.RefState); got != tip {
		t.Errorf("the state moved")
	}
}

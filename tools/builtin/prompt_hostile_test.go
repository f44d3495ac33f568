package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
)

// within runs the call and fails the test if it takes longer than d;
// cleanup releases whatever a FIFO holds.
func within(t *testing.T, d time.Duration, fifos []string, call func() tools.Result) tools.Result {
	t.Helper()
	done := make(chan tools.Result, 1)
	go func() { done <- call() }()
	select {
	case r := <-done:
		return r
	case <-time.After(d):
		for _, f := range fifos {
			if w, err := os.OpenFile(f, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		}
		t.Fatalf("the call was still running after %v", d)
	}
	return tools.Result{}
}

// TestPromptRegistryHostileFiles is issue 29 item 9: the prompt registry
// was read inside the transaction with no check of what it opened, so a
// FIFO at registry.json or at a template (any agent can mkfifo in its
// worktree) blocked prompt_reload, prompt_search and prompt_execute in
// open() for ever while holding the writer lock (every other write of the
// repository waited behind it), and /dev/zero or a 2 GB template grew
// memory without bound. Now only regular files are read, within size caps,
// and before the transaction: each call answers at once, with the problem
// named, and other writers go on meanwhile.
func TestPromptRegistryHostileFiles(t *testing.T) {
	e := newEnv(t).withClimpt()
	e.ok(human, "agent_register", `{"id":"w1","type":"worker"}`)
	reg := filepath.Join(e.dir, ".agent", "climpt", "registry.json")
	tpl := filepath.Join(e.dir, ".agent", "climpt", "prompts", "git", "group-commit", "unstaged-changes", "f_default.md")
	fifos := []string{reg, tpl}
	for _, f := range fifos {
		os.Remove(f)
		if err := syscall.Mkfifo(f, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, f := range fifos {
			if w, err := os.OpenFile(f, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		}
	})
	call := func(tool, args string) tools.Result {
		return within(t, 10*time.Second, fifos, func() tools.Result {
			return e.reg.CallAs(context.Background(), e.st, tools.Origin{ID: "w1"}, tool, json.RawMessage(args))
		})
	}
	r := call("prompt_reload", `{}`)
	if r.OK || r.Error.Code != tools.RegistryLoadFailed || !strings.Contains(r.Error.Message, "not a regular file (a FIFO)") {
		t.Errorf("prompt_reload: %+v", r)
	}
	if r := call("prompt_search", `{"query":"commit my changes"}`); !r.OK {
		t.Errorf("prompt_search: %+v", r.Error)
	}
	r = call("prompt_execute", `{"c1":"git","c2":"group-commit","c3":"unstaged-changes"}`)
	if r.OK || !strings.Contains(r.Error.Message, "FIFO") {
		t.Errorf("prompt_execute: %+v", r)
	}

	// a device, and a 2 GB template: refused by what they are, unread (a
	// template linked outside the prompts folder was refused before)
	for _, f := range []string{reg, tpl} {
		os.Remove(f)
		if err := os.Symlink("/dev/zero", f); err != nil {
			t.Fatal(err)
		}
	}
	r = call("prompt_reload", `{}`)
	if r.OK || r.Error.Code != tools.RegistryLoadFailed || !strings.Contains(fmt.Sprint(r.Error.Details["problems"]), "registry.json: not a regular file (a character device)") {
		t.Errorf("prompt_reload of /dev/zero: %+v", r)
	}
	if r := call("prompt_execute", `{"c1":"git","c2":"group-commit","c3":"unstaged-changes"}`); r.OK {
		t.Errorf("prompt_execute of /dev/zero: %+v", r)
	}
	os.Remove(reg)
	os.WriteFile(reg, []byte(`{"version":"1","tools":{"commands":[]}}`), 0o644)
	os.Remove(tpl)
	f, err := os.Create(tpl)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(2 << 30)
	f.Close()
	r = call("prompt_execute", `{"c1":"git","c2":"group-commit","c3":"unstaged-changes"}`)
	if r.OK || !strings.Contains(r.Error.Message, "the limit is") {
		t.Errorf("prompt_execute of 2 GB: %+v", r)
	}
}

// TestPrepareRunsOutsideTheLock: a tool's prepare step (where the prompt
// tools read the working tree) runs before its transaction, so another
// writer is not held up while it works.
func TestPrepareRunsOutsideTheLock(t *testing.T) {
	e := newEnv(t)
	e.ok(human, "agent_register", `{"id":"w1","type":"worker"}`)
	release := make(chan struct{})
	started := make(chan struct{})
	type in struct{}
	slow := tools.Define("slow_read", "prompt.search", "reads slowly", tools.CLI{}, func(ctx context.Context, c *tools.Call, _ in) (string, error) {
		return c.Prepared.(string), nil
	}).Prepare(func(ctx context.Context, p tools.Prep, _ any) any {
		close(started)
		<-release
		return "prepared"
	})
	cat := builtin.Catalog()
	cat.Tools = append(cat.Tools, slow)
	reg := tools.NewRegistry(cat)
	done := make(chan tools.Result, 1)
	go func() {
		done <- reg.CallAs(context.Background(), e.st, tools.Origin{ID: "w1"}, "slow_read", json.RawMessage(`{}`))
	}()
	<-started
	mail := within(t, 10*time.Second, nil, func() tools.Result {
		return reg.CallAs(context.Background(), e.st, tools.Origin{ID: "w1"}, "mail_send", json.RawMessage(`{"to":"w1","subject":"s","body":"b"}`))
	})
	close(release)
	if !mail.OK {
		t.Fatalf("mail_send: %+v", mail.Error)
	}
	if r := <-done; !r.OK || r.Data != "prepared" {
		t.Fatalf("slow_read: %+v", r)
	}
}

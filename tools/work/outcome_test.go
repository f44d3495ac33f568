package work

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tmux"
	"github.com/gitcodex/git-codex/tools"
)

// instanceRepo is a repository with a commit and state, agents started by
// the launcher "cat" (which runs command, then cat), and a private tmux
// server.
func instanceRepo(t *testing.T, command string) (*gitstate.Store, *tools.Registry, string) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not on PATH")
	}
	dir := gitstatetest.NewRepo(t)
	gitstatetest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sock, err := os.MkdirTemp("", "cxo")
	if err != nil {
		t.Fatal(err)
	}
	tm := tmux.Runner{Socket: filepath.Join(sock, "s"), Config: "/dev/null"}
	t.Cleanup(func() { tm.KillServer(context.Background()); os.RemoveAll(sock) })
	reg := Builtin().WithEnv(tools.Env{Tmux: tm})
	ctx := context.Background()
	if _, err := tools.NewRegistry(tools.Catalog{}).Init(ctx, st, tools.Origin{ID: "human:t@example.com"}); err != nil {
		t.Fatal(err)
	}
	launcher, _ := json.Marshal("sh -c '" + command + "; exec cat'")
	for _, args := range []string{`{"key":"agent.cat.command","value":` + string(launcher) + `}`, `{"key":"agent.default","value":"cat"}`} {
		if r := reg.CallAs(ctx, st, tools.Origin{ID: "human:t@example.com"}, "config_set", json.RawMessage(args)); !r.OK {
			t.Fatalf("config_set %s: %+v", args, r.Error)
		}
	}
	return st, reg, dir
}

// TestStartOutcomeSaysWhatHappened: an agent that calls in before spawn's
// start check is done (it is ACTIVE already) gets a start outcome commit
// that changes nothing; its summary says so. It was "spawn: human:..."
// with an empty diff, which said nothing (the kept demo had them).
func TestStartOutcomeSaysWhatHappened(t *testing.T) {
	ctx := context.Background()
	marker, gate := filepath.Join(t.TempDir(), "started"), filepath.Join(t.TempDir(), "go")
	// the agent keeps running (never waiting, so the start check goes on
	// watching it) until the test let it on
	st, reg, dir := instanceRepo(t, "touch "+marker+"; while [ ! -e "+gate+" ]; do :; done")
	done := make(chan tools.Result)
	go func() {
		done <- reg.CallAs(ctx, st, tools.Origin{ID: "human:t@example.com"}, "spawn", json.RawMessage(`{"type":"coding","prompt":"p","name":"quick"}`))
	}()
	// the agent calls in as soon as its pane runs, inside the start
	// check
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the agent's pane never ran")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if r := reg.CallAs(ctx, st, tools.Origin{ID: "quick"}, "agent_get_status", json.RawMessage(`{}`)); !r.OK {
		t.Fatalf("agent_get_status: %+v", r.Error)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if !r.OK {
		t.Fatalf("spawn: %+v", r.Error)
	}
	// the call's last commit, the outcome: it changed nothing, so it is
	// a read of the state it saw (on this machine's reads ref)
	log := gitstatetest.Git(t, dir, "show", "-s", "--format=%s%n%(trailers:key=Codex-Tool,valueonly)", r.Commit)
	if log != "spawn: quick's session started; it was ACTIVE already\nspawn" {
		t.Fatalf("the start outcome's commit:\n%s", log)
	}
	readAt := gitstatetest.Git(t, dir, "show", "-s", "--format=%(trailers:key="+gitstate.TrailerReadAt+",valueonly)", r.Commit)
	if readAt == "" {
		t.Fatalf("the outcome is not a read")
	}
	if diff := gitstatetest.Git(t, dir, "diff", "--stat", readAt, r.Commit); diff != "" {
		t.Errorf("the outcome changed %s", diff)
	}
	// no commit of the trail says only "tool: actor" about a change of nothing
	for _, line := range strings.Split(gitstatetest.Git(t, dir, "log", "--format=%s|%(trailers:key=Codex-Tool,valueonly)|%(trailers:key=Codex-Actor,valueonly)|%(trailers:key=Codex-Follows,valueonly)", gitstate.RefState, "--glob="+gitstate.ReadsPrefix+"*/*"), "\n") {
		f := strings.Split(line, "|")
		if len(f) == 4 && f[3] != "" && f[0] == f[1]+": "+f[2] {
			t.Errorf("an outcome whose summary says nothing: %s", line)
		}
	}
}

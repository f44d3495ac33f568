package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listChanges connects as caller with a client that counts
// notifications/tools/list_changed on the returned channel. An optional
// protocol version pins the session's (default: go-sdk's latest).
func listChanges(t *testing.T, dir, caller string, version ...string) (*mcp.ClientSession, *Server, chan struct{}) {
	t.Helper()
	changed := make(chan struct{}, 16)
	sopts := &mcp.ClientSessionOptions{}
	if len(version) > 0 {
		sopts.ProtocolVersion = version[0]
	}
	cs, _, s := mcpConnectWith(t, dir, caller, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}, sopts)
	if len(version) > 0 && cs.InitializeResult().ProtocolVersion != version[0] {
		t.Fatalf("negotiated %s, want %s", cs.InitializeResult().ProtocolVersion, version[0])
	}
	return cs, s, changed
}

func listed(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return toolNames(res.Tools)
}

// listedSettles lists the tools until ok holds (go-sdk sends list_changed
// 10 ms after the last of a run of adds: on a loaded machine the run can
// pause longer than that, and a client lists a set still being added).
func listedSettles(t *testing.T, cs *mcp.ClientSession, ok func([]string) bool) []string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := listed(t, cs)
		if ok(got) || time.Now().After(deadline) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitChange(t *testing.T, changed chan struct{}, why string) {
	t.Helper()
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatalf("no notifications/tools/list_changed after %s", why)
	}
}

func setPolicy(t *testing.T, dir, key, value string) {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"key": key, "value": value})
	if r := builtin.Registry().CallAs(context.Background(), mcpStore(t, dir), tools.Origin{ID: mcpHuman}, "config_set", args); !r.OK {
		t.Fatalf("config_set %s: %+v", key, r.Error)
	}
}

// TestMCPPolicyChangeWhileServing changes a worker's policy from another
// process's store while alice's server runs: the server notices on its
// own (watching the state's tip), lists the new tool and tells the client,
// in the latest protocol and in 2025-06-18 (as the TypeScript SDK's
// clients speak it).
func TestMCPPolicyChangeWhileServing(t *testing.T) {
	for _, version := range []string{"2026-07-28", "2025-06-18"} {
		t.Run(version, func(t *testing.T) { policyChangeWhileServing(t, version) })
	}
}

func policyChangeWhileServing(t *testing.T, version string) {
	dir := mcpRepo(t)
	cs, s, changed := listChanges(t, dir, "alice", version)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.watch(ctx, 20*time.Millisecond)
	if slices.Contains(listed(t, cs), "agent_list") {
		t.Fatal("a worker is shown agent_list")
	}
	setPolicy(t, dir, "policy.worker.allow", "mail.*,agent.get_status,agent.list,lock.*")
	waitChange(t, changed, "a person allowed workers agent.list")
	want := []string{"agent_get_status", "agent_list", "lock_acquire", "lock_list", "lock_release",
		"mail_list_inbox", "mail_read", "mail_reply", "mail_send"}
	if got := listed(t, cs); !slices.Equal(got, want) {
		t.Fatalf("after the policy change alice is shown %v, want %v", got, want)
	}
	// and the tool it now lists works
	env := mcpCall(t, cs, "agent_list", `{}`)
	if !env.OK {
		t.Fatalf("agent_list after it was allowed: %+v", env.Error)
	}
	// A commit that leaves the policy alone changes nothing listed.
	if r := builtin.Registry().CallAs(context.Background(), mcpStore(t, dir), tools.Origin{ID: mcpHuman}, "log_decision", json.RawMessage(`{"title":"t","body":"b"}`)); !r.OK {
		t.Fatal(r.Error)
	}
	time.Sleep(200 * time.Millisecond)
	select {
	case <-changed:
		t.Error("tools/list_changed without a policy change")
	default:
	}
}

// TestMCPPolicyChangeSeenAfterCall: a server that does not poll (its
// interval is an hour) applies a policy change its own call made as soon
// as the call is answered.
func TestMCPPolicyChangeSeenAfterCall(t *testing.T) {
	dir := mcpRepo(t)
	// boss (a supervisor) changes its own policy through its own server.
	boss, _, bossChanged := listChanges(t, dir, "boss")
	if !slices.Contains(listed(t, boss), "task_create") {
		t.Fatal("a supervisor is not shown task_create")
	}
	env := mcpCall(t, boss, "config_set", `{"key":"policy.supervisor.deny","value":"task.create"}`)
	if !env.OK {
		t.Fatal(env.Error)
	}
	waitChange(t, bossChanged, "boss denied itself task.create")
	if slices.Contains(listed(t, boss), "task_create") {
		t.Fatal("boss is still shown task_create")
	}
	// A call to the tool it no longer lists is refused and audited.
	env = mcpCall(t, boss, "task_create", `{"title":"x","description":"y"}`)
	if env.OK || env.Error.Code != tools.PermissionDenied {
		t.Fatalf("task_create after it was denied: %+v", env)
	}
	if got := lastTrailers(t, dir); got != "task_create/boss/PERMISSION_DENIED" {
		t.Errorf("last commit %q", got)
	}
}

// TestMCPUnregisteredCallerListsNothing: an --as that is not registered may
// call nothing, so nothing is listed; once registered, its tools appear.
func TestMCPUnregisteredCallerListsNothing(t *testing.T) {
	dir := mcpRepo(t)
	cs, s, changed := listChanges(t, dir, "dana")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.watch(ctx, 20*time.Millisecond)
	if got := listed(t, cs); len(got) != 0 {
		t.Fatalf("an unregistered caller is shown %v", got)
	}
	if r := builtin.Registry().CallAs(context.Background(), mcpStore(t, dir), tools.Origin{ID: mcpHuman}, "agent_register", json.RawMessage(`{"id":"dana","type":"worker"}`)); !r.OK {
		t.Fatal(r.Error)
	}
	waitChange(t, changed, "dana was registered")
	if got := listedSettles(t, cs, func(got []string) bool { return slices.Equal(got, workerTools) }); !slices.Equal(got, workerTools) {
		t.Fatalf("dana, now a worker, is shown %v", got)
	}
}

// stateHead is the newest audit commit (lastAudit): the state's tip, or a
// read made after it.
func stateHead(t *testing.T, dir string) string {
	t.Helper()
	return lastAudit(t, dir)
}

// TestMCPBeforeInit: a server started before `git codex init` lists nothing
// (every call would be refused with NOT_INITIALIZED) and lists the tools
// once the state exists.
func TestMCPBeforeInit(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	cs, s, changed := listChanges(t, dir, mcpHuman)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.watch(ctx, 20*time.Millisecond)
	if got := listed(t, cs); len(got) != 0 {
		t.Fatalf("before init the server lists %v", got)
	}
	if env := mcpCall(t, cs, "agent_get_status", `{}`); env.OK || env.Error.Code != tools.NotInitialized {
		t.Fatalf("a call before init: %+v", env)
	}
	if _, err := builtin.Registry().Init(context.Background(), mcpStore(t, dir), tools.Origin{ID: mcpHuman}); err != nil {
		t.Fatal(err)
	}
	waitChange(t, changed, "git codex init")
	// the server adds the tools one by one, each with its own
	// list_changed: the first may arrive before the last tool is in
	want := len(builtin.Registry().All())
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got := listed(t, cs)
		if len(got) == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after init a person is shown %d tools, want %d: %v", len(got), want, got)
		}
	}
}

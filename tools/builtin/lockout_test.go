package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
)

// TestPolicyLockout is issue 16 item 9: `config set policy.human.deny '*'`
// succeeded, and then every call, config_set included, was refused for
// everyone. Such a change is refused; and a state that arrives locked (a
// peer pushed it) has a way back for people: config_reset, outside the
// policy, audited.
func TestPolicyLockout(t *testing.T) {
	e := newEnv(t)
	e.ok(human, "agent_register", `{"id":"w1","type":"worker"}`)
	for _, tt := range []struct{ key, value string }{
		{"policy.human.deny", "*"},
		{"policy.human.deny", "config.*"},
		{"policy.human.allow", "mail.*"},
		{"policy.human.allow", "[]"},
	} {
		tree := e.tree()
		r := e.call(human, "config_set", `{"key":"`+tt.key+`","value":"`+tt.value+`"}`)
		if r.OK || r.Error.Code != tools.InvalidInput || r.Error.Details["reason"] != "lockout" {
			t.Fatalf("config set %s %s: %+v", tt.key, tt.value, r)
		}
		if e.tree() != tree {
			t.Errorf("config set %s %s changed the state", tt.key, tt.value)
		}
	}
	// narrowing people while keeping config.set is fine
	e.ok(human, "config_set", `{"key":"policy.human.deny","value":"task.*"}`)

	// A locked config arrives by sync (written here as a peer would), set
	// at a clock older than this state's (a merge would have witnessed a
	// newer one; this raw write does not).
	locked := map[string]any{"entries": map[string]any{
		"policy.human.deny":      map[string]any{"value": []string{"*"}, "set_by": "human:mallory@example.com", "set_at": "2026-01-01T00:00:00Z", "clock": 2},
		"policy.supervisor.deny": map[string]any{"value": []string{"*"}, "set_by": "human:mallory@example.com", "set_at": "2026-01-01T00:00:00Z", "clock": 2},
	}}
	if _, err := e.st.Update(context.Background(), func(tx *gitstate.Tx) error {
		tx.SetMeta(gitstate.Meta{Summary: "sync: a peer's config", Trailers: []gitstate.Trailer{{Key: gitstate.TrailerTool, Value: "sync"}}})
		return tx.Put("config/config.json", locked)
	}); err != nil {
		t.Fatal(err)
	}
	if r := e.call(human, "config_set", `{"key":"policy.human.deny","value":"[]"}`); r.OK || r.Error.Code != tools.PermissionDenied {
		t.Fatalf("locked state: config_set = %+v", r)
	}
	// agents get no way round the policy
	if r := e.call("w1", "config_reset", `{"what":"policy"}`); r.OK || r.Error.Code != tools.PermissionDenied {
		t.Fatalf("a worker reset the policy: %+v", r)
	}
	if r := e.call(human, "config_reset", `{"what":"nonsense"}`); r.OK || r.Error.Code != tools.InvalidInput {
		t.Fatalf("reset nonsense: %+v", r)
	}
	out := e.ok(human, "config_reset", `{"what":"policy"}`)
	resetClock := e.auditTrailer(e.last, gitstate.TrailerClock)
	if n := len(out["settings"].([]any)); n != 2*len(tools.AgentTypes()) {
		t.Errorf("reset %d keys", n)
	}
	msg := gitstatetest.Git(t, e.dir, "log", "-1", "--format=%B", gitstate.RefState)
	if !strings.Contains(msg, "Codex-Tool: config_reset") || !strings.Contains(msg, "Codex-Actor: "+human) || !strings.Contains(msg, "Codex-Result: ok") {
		t.Errorf("the reset is not audited:\n%s", msg)
	}
	// people are back in, with defaults written at the reset's clock (so a
	// peer's older lock does not win the next merge)
	e.ok(human, "config_set", `{"key":"policy.worker.allow","value":"mail.*"}`)
	var cfg tools.Config
	raw := gitstatetest.Git(t, e.dir, "show", gitstate.RefState+":config/config.json")
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		t.Fatal(err)
	}
	if d := cfg.Entries["policy.human.deny"]; string(d.Value) != "[]" || fmt.Sprint(d.Clock) != resetClock || d.Clock <= 2 || d.SetBy != human {
		t.Errorf("policy.human.deny after reset = %+v", d)
	}
}

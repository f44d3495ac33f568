package work

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
)

// TestCallingInstanceIsRunning: an instance that calls a tool while spawn
// still has it STARTING is recorded running by that call (ACTIVE, or
// REVIEWING for a reviewer), so an agent quicker than the start check is
// not refused request_review; a refused call and another caller's call
// change nothing.
func TestCallingInstanceIsRunning(t *testing.T) {
	ctx := context.Background()
	dir := gitstatetest.NewRepo(t)
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := tools.NewRegistry(tools.Catalog{}).Init(ctx, st, tools.Origin{ID: "human:t@example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Update(ctx, func(tx *gitstate.Tx) error {
		tx.SetMeta(gitstate.Meta{Summary: "two instances starting"})
		for _, a := range []tools.Agent{
			{ID: "coder-1", Type: tools.TypeCoding, State: tools.StateIdle, Status: tools.StatusStarting},
			{ID: "coder-2", Type: tools.TypeCoding, State: tools.StateIdle, Status: tools.StatusStarting},
			{ID: "review-1", Type: tools.TypeReview, State: tools.StateIdle, Status: tools.StatusStarting, ReviewOf: "coder-1"},
		} {
			if err := tx.Put(tools.AgentPath(a.ID), a); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	reg := Builtin()
	status := func(id string) string {
		t.Helper()
		var a tools.Agent
		if err := st.View(ctx, func(sn *gitstate.Snapshot) error { return sn.Get(tools.AgentPath(id), &a) }); err != nil {
			t.Fatal(err)
		}
		return a.Status
	}
	call := func(caller, tool, args string) tools.Result {
		return reg.CallAs(ctx, st, tools.Origin{ID: caller}, tool, json.RawMessage(args))
	}

	if r := call("human:t@example.com", "agent_show", `{"id":"coder-2"}`); !r.OK || status("coder-2") != tools.StatusStarting {
		t.Errorf("a person's look at coder-2: %+v, status %s; want it STARTING still", r.Error, status("coder-2"))
	}
	if r := call("coder-2", "config_set", `{"key":"review.max_iterations","value":"9"}`); r.OK || status("coder-2") != tools.StatusStarting {
		t.Errorf("coder-2's refused call: %+v, status %s; want a refusal that leaves it STARTING", r, status("coder-2"))
	}
	if r := call("coder-1", "agent_get_status", `{}`); !r.OK || status("coder-1") != tools.StatusActive {
		t.Errorf("coder-1 calling in: %+v, status %s; want ACTIVE", r.Error, status("coder-1"))
	}
	if r := call("review-1", "agent_get_status", `{}`); !r.OK || status("review-1") != tools.StatusReviewing {
		t.Errorf("review-1 calling in: %+v, status %s; want REVIEWING", r.Error, status("review-1"))
	}
}

package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
)

// TestHooksRunWhereTheRegistrySaysSo: the pipeline's noun steps are the
// hooks the registry was given, at their points: BeforeHandler inside the
// call's transaction (its writes are the call's), OnFailure after a
// failure was committed (its commit the call's latest), UnknownTool for a
// name that is no tool; a registry without hooks runs none.
func TestHooksRunWhereTheRegistrySaysSo(t *testing.T) {
	st, _ := effectsStore(t)
	ctx := context.Background()
	human := Origin{ID: "human:t@example.com"}
	type in struct {
		Fail bool `json:"fail,omitempty"`
	}
	probe := Define("probe", "probe.run", "test tool", CLI{}, func(ctx context.Context, c *Call, in in) (struct{}, error) {
		if in.Fail {
			return struct{}{}, Errorf(InternalError, "broke")
		}
		return struct{}{}, nil
	})

	bare := NewRegistry(Catalog{Tools: []*Tool{probe}})
	if r := bare.CallAs(ctx, st, human, "claude_query", json.RawMessage(`{}`)); r.Error == nil || r.Error.Code != ToolNotFound || r.Error.Details["use"] != nil {
		t.Fatalf("a registry without hooks: unknown tool = %+v, want a plain TOOL_NOT_FOUND", r.Error)
	}
	if r := bare.CallAs(ctx, st, human, "probe", json.RawMessage(`{"fail":true}`)); r.OK {
		t.Fatal("the probe did not fail")
	}

	var before, failed []string
	hooked := NewRegistry(Catalog{Tools: []*Tool{probe}, Hooks: Hooks{
		BeforeHandler: []func(c *Call) error{func(c *Call) error {
			before = append(before, c.tool)
			return c.Tx.Put("probe/before.json", map[string]string{"by": c.Caller.ID})
		}},
		OnFailure: []func(ctx context.Context, st *gitstate.Store, c *Call, res Result, commit string) string{
			func(ctx context.Context, st *gitstate.Store, c *Call, res Result, commit string) string {
				failed = append(failed, string(res.Error.Code)+" after "+commit)
				return "latest"
			}},
		UnknownTool: []func(name string) *Error{
			func(name string) *Error { return nil },
			Renamed(map[string]string{"claude_query": "agent_query"}),
		},
	}})
	if r := hooked.CallAs(ctx, st, human, "claude_query", json.RawMessage(`{}`)); r.Error == nil || r.Error.Details["use"] != "agent_query" {
		t.Fatalf("UnknownTool not asked: %+v", r.Error)
	}
	if r := hooked.CallAs(ctx, st, human, "nothing_at_all", json.RawMessage(`{}`)); r.Error == nil || r.Error.Code != ToolNotFound {
		t.Fatalf("UnknownTool's nil answer: %+v, want TOOL_NOT_FOUND", r.Error)
	}
	r := hooked.CallAs(ctx, st, human, "probe", json.RawMessage(`{}`))
	if !r.OK || len(before) != 1 {
		t.Fatalf("BeforeHandler: ran %v, result %+v", before, r)
	}
	var rec map[string]string
	if err := st.View(ctx, func(sn *gitstate.Snapshot) error { return sn.Get("probe/before.json", &rec) }); err != nil || rec["by"] != human.ID {
		t.Fatalf("BeforeHandler's write is not the call's: %v %v", rec, err)
	}
	r = hooked.CallAs(ctx, st, human, "probe", json.RawMessage(`{"fail":true}`))
	// every failure, the two unknown tools' too (escalate picks its own)
	if r.OK || len(failed) != 3 || !strings.HasPrefix(failed[2], "INTERNAL_ERROR after ") || r.Commit != "latest" {
		t.Fatalf("OnFailure: ran %v, result commit %q", failed, r.Commit)
	}
}

// TestInternalToolsAreNotCalls: init, restore and sync are entry points of
// their own (Registry.Init, Restore, Sync), never tools a client can list
// or call.
func TestInternalToolsAreNotCalls(t *testing.T) {
	st, _ := effectsStore(t)
	reg := NewRegistry(Catalog{})
	for _, name := range []string{"init", "restore", "sync"} {
		if _, ok := reg.Lookup(name); ok {
			t.Errorf("%s is listed as a tool", name)
		}
		r := reg.CallAs(context.Background(), st, Origin{ID: "human:t@example.com"}, name, json.RawMessage(`{}`))
		if r.Error == nil || r.Error.Code != ToolNotFound {
			t.Errorf("calling %s: %+v, want TOOL_NOT_FOUND", name, r.Error)
		}
	}
}

// TestAgentEndedAndReapers: Join keeps every catalog's AgentEnded and
// Reapers hooks, in order; a Call runs them in that order, Reap returning
// every reaper's ids; a Call with no hooks (CallFor's) runs none and
// reaps nothing.
func TestAgentEndedAndReapers(t *testing.T) {
	var ran []string
	end := func(name string) func(*Call, *Agent) error {
		return func(_ *Call, a *Agent) error { ran = append(ran, name+":"+a.ID); return nil }
	}
	reap := func(id string) func(*Call, bool) ([]string, error) {
		return func(_ *Call, dryRun bool) ([]string, error) {
			if !dryRun {
				t.Errorf("reaper %s: dryRun not passed", id)
			}
			return []string{id}, nil
		}
	}
	cat := Join(
		Catalog{Hooks: Hooks{AgentEnded: []func(*Call, *Agent) error{end("a")}, Reapers: []func(*Call, bool) ([]string, error){reap("d1")}}},
		Catalog{Hooks: Hooks{AgentEnded: []func(*Call, *Agent) error{end("b")}, Reapers: []func(*Call, bool) ([]string, error){reap("d2")}}},
	)
	c := &Call{hooks: &cat.Hooks}
	if err := c.AgentEnded(&Agent{ID: "r1"}); err != nil || strings.Join(ran, ",") != "a:r1,b:r1" {
		t.Errorf("AgentEnded ran %v (err %v), want a:r1,b:r1", ran, err)
	}
	if ids, err := c.Reap(true); err != nil || strings.Join(ids, ",") != "d1,d2" {
		t.Errorf("Reap = %v, %v; want d1,d2", ids, err)
	}
	none := &Call{}
	if err := none.AgentEnded(&Agent{ID: "r2"}); err != nil || len(ran) != 2 {
		t.Errorf("a Call without hooks ran %v (err %v)", ran, err)
	}
	if ids, err := none.Reap(false); err != nil || ids == nil || len(ids) != 0 {
		t.Errorf("a Call without hooks reaped %#v, %v; want an empty list", ids, err)
	}
}

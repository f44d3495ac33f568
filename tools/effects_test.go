package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// effectsRepo is a state with a "probe" tool that records an intent,
// works outside git in an after-step, and records the outcome; the test
// says what the outside work does.
type effectsOut struct {
	Status string `json:"status"`
}

type effectsIn struct {
	Refuse bool `json:"refuse,omitempty"`
}

func effectsRegistry(outside func(ctx context.Context, f *Followup) error, undo func(context.Context) error) *Registry {
	probe := Define("probe", "probe.run", "test tool", CLI{}, func(ctx context.Context, c *Call, in effectsIn) (*effectsOut, error) {
		out := &effectsOut{Status: "STARTING"}
		if undo != nil {
			c.Tx.OnAbort(undo)
		}
		if in.Refuse {
			return nil, Errorf(InvalidInput, "refused on purpose")
		}
		if err := c.Tx.Put("probe/intent.json", out); err != nil {
			return nil, err
		}
		c.After(func(ctx context.Context, f *Followup) error {
			if err := outside(ctx, f); err != nil {
				return f.Record(ctx, func(c *Call) error {
					out.Status = "FAILED"
					c.Tx.Put("probe/intent.json", out)
					c.Summarize("probe failed")
					return nil
				})
			}
			return f.Record(ctx, func(c *Call) error {
				out.Status = "ACTIVE"
				c.Summarize("probe active")
				return c.Tx.Put("probe/intent.json", out)
			})
		})
		return out, nil
	})
	return NewRegistry(Catalog{Tools: []*Tool{probe}})
}

func effectsStore(t *testing.T) (*gitstate.Store, string) {
	t.Helper()
	dir := gitstatetest.NewRepo(t)
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := NewRegistry(Catalog{}).Init(context.Background(), st, Origin{ID: "human:t@example.com"}); err != nil {
		t.Fatal(err)
	}
	// people may call the probe (it is not in the default policy)
	if _, err := st.Update(context.Background(), func(tx *gitstate.Tx) error {
		tx.SetMeta(gitstate.Meta{Summary: "policy"})
		v, _ := json.Marshal("*")
		return tx.Put(PathConfig, Config{Entries: map[string]ConfigEntry{"policy.human.allow": {Value: v, SetBy: "t"}}})
	}); err != nil {
		t.Fatal(err)
	}
	return st, dir
}

// TestAfterRunsOutsideTheLockAndRecordsTheOutcome: the intent is one
// commit, the outcome another that follows it; the after-step can write
// to the store (it would deadlock under the writer lock), and the call's
// result shows what the step set.
func TestAfterRunsOutsideTheLockAndRecordsTheOutcome(t *testing.T) {
	ctx := context.Background()
	st, dir := effectsStore(t)
	reg := effectsRegistry(func(ctx context.Context, f *Followup) error {
		// another writer gets through while the step runs
		_, err := f.Store.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(gitstate.Meta{Summary: "someone else's call"})
			return tx.Put("other.json", map[string]int{"n": 1})
		})
		return err
	}, nil)
	res := reg.CallAs(ctx, st, Origin{ID: "human:t@example.com"}, "probe", json.RawMessage(`{}`))
	if !res.OK || res.Data.(*effectsOut).Status != "ACTIVE" {
		t.Fatalf("result = %+v", res)
	}
	log := gitstatetest.Git(t, dir, "log", "-3", "--format=%s|%(trailers:key=Codex-Follows,valueonly,separator=)", gitstate.RefState)
	first := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState+"~2")
	if want := "probe: probe active|" + first + "\nsomeone else's call|\nprobe: human:t@example.com|"; log != want {
		t.Fatalf("history:\n%s\nwant\n%s", log, want)
	}
	if res.Commit != gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState) {
		t.Errorf("result's commit %s is not the outcome's", res.Commit)
	}
	if got := gitstatetest.Git(t, dir, "cat-file", "-p", gitstate.RefState+":probe/intent.json"); !strings.Contains(got, "ACTIVE") {
		t.Errorf("record = %s", got)
	}
}

// TestAfterFailureIsTheResult: a step that fails records FAILED and its
// error is the call's result; the intent's commit stays.
func TestAfterFailureIsTheResult(t *testing.T) {
	ctx := context.Background()
	st, dir := effectsStore(t)
	reg := effectsRegistry(func(context.Context, *Followup) error { return errors.New("no tmux") }, nil)
	res := reg.CallAs(ctx, st, Origin{ID: "human:t@example.com"}, "probe", json.RawMessage(`{}`))
	if !res.OK || res.Data.(*effectsOut).Status != "FAILED" {
		t.Fatalf("result = %+v", res)
	}
	reg = effectsRegistry(func(context.Context, *Followup) error { panic("boom") }, nil)
	res = reg.CallAs(ctx, st, Origin{ID: "human:t@example.com"}, "probe", json.RawMessage(`{}`))
	if res.OK || res.Error.Code != InternalError {
		t.Fatalf("a panicking step: %+v", res)
	}
	if got := gitstatetest.Git(t, dir, "cat-file", "-p", gitstate.RefState+":probe/intent.json"); !strings.Contains(got, "STARTING") {
		t.Errorf("record after the panic = %s, want the intent", got)
	}
}

// TestUndoFailureIsAudited: a refused call's undo step runs after the
// commit, outside the lock; when it fails, one more commit says so.
func TestUndoFailureIsAudited(t *testing.T) {
	ctx := context.Background()
	st, dir := effectsStore(t)
	ran := false
	reg := effectsRegistry(nil, func(context.Context) error { ran = true; return errors.New("worktree busy") })
	res := reg.CallAs(ctx, st, Origin{ID: "human:t@example.com"}, "probe", json.RawMessage(`{"refuse":true}`))
	if res.OK || res.Error.Code != InvalidInput || !ran {
		t.Fatalf("result = %+v (undo ran: %v)", res, ran)
	}
	// both change nothing in the state: they are on this machine's reads
	// ref, the undo's after the refusal
	reads := "--glob=" + gitstate.ReadsPrefix + "*/*"
	got := gitstatetest.Git(t, dir, "log", "-2", "--format=%(trailers:key=Codex-Error,key=Codex-Undo-Error,key=Codex-Follows,valueonly,separator=|)", reads)
	refusal := gitstatetest.Git(t, dir, "log", "-1", "--skip=1", "--format=%H", reads)
	if want := refusal + "|worktree busy\nINVALID_INPUT"; got != want {
		t.Errorf("trailers =\n%s\nwant\n%s", got, want)
	}
	if _, err := gitstatetest.GitErr(dir, "cat-file", "-e", gitstate.RefState+":probe/intent.json"); err == nil {
		t.Errorf("the refused call left its intent in the state")
	}
}

// TestOutcomeWithoutSummary: an after-step's outcome that sets no summary
// says what it follows.
func TestOutcomeWithoutSummary(t *testing.T) {
	ctx := context.Background()
	st, dir := effectsStore(t)
	reg := effectsRegistry(func(ctx context.Context, f *Followup) error {
		return f.Record(ctx, func(*Call) error { return nil })
	}, nil)
	if res := reg.CallAs(ctx, st, Origin{ID: "human:t@example.com"}, "probe", json.RawMessage(`{}`)); !res.OK {
		t.Fatalf("result = %+v", res)
	}
	// the intent and the probe's own outcome change the state; the
	// outcome that changes nothing is on this machine's reads ref
	intent := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState+"~1")
	got := gitstatetest.Git(t, dir, "log", "-1", "--format=%s", "--glob="+gitstate.ReadsPrefix+"*/*")
	if want := "probe: human:t@example.com: the outcome of " + intent[:12]; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}

package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// setConfig sets config keys directly (values as JSON), for tools the
// default policy does not know.
func setConfig(t *testing.T, st *gitstate.Store, kv map[string]string) {
	t.Helper()
	if _, err := st.Update(context.Background(), func(tx *gitstate.Tx) error {
		cfg, err := LoadConfig(tx, NewRegistry(Catalog{}).ConfigKeys())
		if err != nil {
			return err
		}
		for k, v := range kv {
			cfg.Entries[k] = ConfigEntry{Value: json.RawMessage(v), SetBy: "t"}
		}
		tx.SetMeta(gitstate.Meta{Summary: "config"})
		return tx.Put(PathConfig, Config{Entries: cfg.Entries})
	}); err != nil {
		t.Fatal(err)
	}
}

type slowIn struct {
	Sleep int `json:"sleep_ms"`
}

// slowTool writes a record, then takes sleep_ms whatever its context says:
// a handler that does not watch its context must not commit late either.
// cancelled reports when the handler saw its context end.
func slowTool(cancelled chan<- time.Duration) *Tool {
	return Define("slow", "slow.run", "test tool", CLI{}, func(ctx context.Context, c *Call, in slowIn) (struct{}, error) {
		start := time.Now()
		if err := c.Tx.Put("slow/record.json", map[string]string{"by": c.Caller.ID}); err != nil {
			return struct{}{}, err
		}
		go func() {
			<-ctx.Done()
			if cancelled != nil {
				cancelled <- time.Since(start)
			}
		}()
		time.Sleep(time.Duration(in.Sleep) * time.Millisecond)
		return struct{}{}, nil
	})
}

// commitTrailer is one trailer of an audit commit.
func commitTrailer(t *testing.T, dir, commit, key string) string {
	t.Helper()
	return gitstatetest.Git(t, dir, "show", "-s", "--format=%(trailers:key="+key+",valueonly)", commit)
}

// TestToolTimeout (issue 25 item 10): a call that outlasts its time limit
// (tools.<tool>.timeout_seconds over tools.timeout_seconds) answers
// TIMEOUT, its handler's context is cancelled at the limit, and nothing it
// wrote is committed: the audit commit's tree is its parent's.
func TestToolTimeout(t *testing.T) {
	st, dir := effectsStore(t)
	setConfig(t, st, map[string]string{"tools.timeout_seconds": "60", "tools.slow.timeout_seconds": "1"})
	cancelled := make(chan time.Duration, 1)
	reg := NewRegistry(Catalog{Tools: []*Tool{slowTool(cancelled)}})
	before := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState+"^{tree}")

	start := time.Now()
	res := reg.CallAs(context.Background(), st, Origin{ID: "human:t@example.com"}, "slow", json.RawMessage(`{"sleep_ms":1600}`))
	took := time.Since(start)
	if res.OK || res.Error.Code != Timeout {
		t.Fatalf("a call past its limit: %+v, want TIMEOUT", res)
	}
	if d := res.Error.Details; d["timeout_seconds"] != 1 || d["key"] != "tools.slow.timeout_seconds" {
		t.Errorf("TIMEOUT details %v, want timeout_seconds 1 and key tools.slow.timeout_seconds", d)
	}
	if res.Error.ToolName != "slow" {
		t.Errorf("tool_name %q", res.Error.ToolName)
	}
	select {
	case d := <-cancelled:
		// the limit counts from the call's start, before the handler's:
		// under load the handler starts late, and the timer fires late
		if d > 3*time.Second {
			t.Errorf("the handler's context ended after %s, want ~1s", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's context was never cancelled")
	}
	if took > 5*time.Second {
		t.Errorf("the call took %s", took)
	}
	if got := commitTrailer(t, dir, res.Commit, "Codex-Error"); got != "TIMEOUT" {
		t.Errorf("the audit record says %q, want TIMEOUT", got)
	}
	if after := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState+"^{tree}"); after != before {
		t.Errorf("the timed-out call changed the state's tree")
	}
	if out := gitstatetest.Git(t, dir, "ls-tree", "-r", "--name-only", gitstate.RefState); strings.Contains(out, "slow/") {
		t.Errorf("the timed-out call's record was committed: %s", out)
	}

	// within its limit, the same call commits
	setConfig(t, st, map[string]string{"tools.slow.timeout_seconds": "30"})
	if res := reg.CallAs(context.Background(), st, Origin{ID: "human:t@example.com"}, "slow", json.RawMessage(`{"sleep_ms":10}`)); !res.OK {
		t.Fatalf("a call within its limit: %+v", res.Error)
	}
	if out := gitstatetest.Git(t, dir, "ls-tree", "-r", "--name-only", gitstate.RefState); !strings.Contains(out, "slow/record.json") {
		t.Errorf("the call within its limit did not commit: %s", out)
	}
}

// TestToolTimeoutGlobal: tools.timeout_seconds applies to a tool with no
// key of its own.
func TestToolTimeoutGlobal(t *testing.T) {
	st, _ := effectsStore(t)
	setConfig(t, st, map[string]string{"tools.timeout_seconds": "1"})
	res := NewRegistry(Catalog{Tools: []*Tool{slowTool(nil)}}).CallAs(context.Background(), st, Origin{ID: "human:t@example.com"}, "slow", json.RawMessage(`{"sleep_ms":1300}`))
	if res.OK || res.Error.Code != Timeout || res.Error.Details["key"] != "tools.timeout_seconds" {
		t.Fatalf("got %+v, want TIMEOUT by tools.timeout_seconds", res)
	}
}

// TestToolTimeoutAfterStep: work outside git still running at the limit is
// cancelled; it records how it ended, and the call answers TIMEOUT.
func TestToolTimeoutAfterStep(t *testing.T) {
	st, _ := effectsStore(t)
	setConfig(t, st, map[string]string{"tools.probe.timeout_seconds": "1"})
	reg := effectsRegistry(func(ctx context.Context, f *Followup) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(30 * time.Second):
			return nil
		}
	}, nil)
	// the probe's outcome step returns nil once it recorded FAILED: make
	// the after-step itself fail, as the instance tools do
	reg.tools["probe"].run = wrapFail(reg.tools["probe"].run)
	start := time.Now()
	res := reg.CallAs(context.Background(), st, Origin{ID: "human:t@example.com"}, "probe", json.RawMessage(`{}`))
	if res.OK || res.Error.Code != Timeout {
		t.Fatalf("got %+v, want TIMEOUT", res)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("took %s", time.Since(start))
	}
	var out effectsOut
	st.View(context.Background(), func(sn *gitstate.Snapshot) error { return sn.Get("probe/intent.json", &out) })
	if out.Status != "FAILED" {
		t.Errorf("the cancelled work recorded %q, want FAILED", out.Status)
	}
}

// wrapFail makes the probe's after-steps fail once they have recorded
// their outcome when their context ended.
func wrapFail(run func(context.Context, *Call, any) (any, error)) func(context.Context, *Call, any) (any, error) {
	return func(ctx context.Context, c *Call, in any) (any, error) {
		out, err := run(ctx, c, in)
		for i, fn := range c.after {
			c.after[i] = func(ctx context.Context, f *Followup) error {
				if err := fn(ctx, f); err != nil {
					return err
				}
				if ctx.Err() != nil {
					return Errorf(AgentStartFailed, "stopped: %v", context.Cause(ctx))
				}
				return nil
			}
		}
		return out, err
	}
}

// TestTimeoutKeys: the per-tool key is a setting; others are not.
func TestTimeoutKeys(t *testing.T) {
	for key, ok := range map[string]bool{
		"tools.timeout_seconds":           true,
		"tools.mail_send.timeout_seconds": true,
		"tools.Mail.timeout_seconds":      false,
		"tools..timeout_seconds":          false,
		"tools.mail_send.timeout_minutes": false,
		"tools.a.b.timeout_seconds":       false,
	} {
		if _, got := NewRegistry(Catalog{}).ConfigKeys().Lookup(key); got != ok {
			t.Errorf("lookupKey(%q) = %v, want %v", key, got, ok)
		}
	}
}

// TestToolTimeoutPrecedence: the tool's own key, else the server's launch
// (MCP_TOOL_TIMEOUT), else tools.timeout_seconds, else the default.
func TestToolTimeoutPrecedence(t *testing.T) {
	cfg := &Config{Entries: map[string]ConfigEntry{}, keys: NewRegistry(Catalog{}).ConfigKeys()}
	ctx := context.Background()
	check := func(ctx context.Context, want time.Duration, wantKey string) {
		t.Helper()
		if d, key := cfg.toolTimeout(ctx, "spawn"); d != want || key != wantKey {
			t.Errorf("toolTimeout = %s by %s, want %s by %s", d, key, want, wantKey)
		}
	}
	check(ctx, time.Hour, "tools.timeout_seconds")
	cfg.Entries["tools.timeout_seconds"] = ConfigEntry{Value: json.RawMessage("30")}
	check(ctx, 30*time.Second, "tools.timeout_seconds")
	launched := WithTimeout(ctx, 5*time.Second)
	check(launched, 5*time.Second, "MCP_TOOL_TIMEOUT")
	cfg.Entries["tools.spawn.timeout_seconds"] = ConfigEntry{Value: json.RawMessage("120")}
	check(launched, 2*time.Minute, "tools.spawn.timeout_seconds")
	check(ctx, 2*time.Minute, "tools.spawn.timeout_seconds")
}

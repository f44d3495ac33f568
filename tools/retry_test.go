package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestRetryPolicyWaits: waits double from retry.delay_ms up to
// retry.max_delay_ms; jitter takes off at most half of each.
func TestRetryPolicyWaits(t *testing.T) {
	p := RetryPolicy{Attempts: 10, delay: 100 * time.Millisecond, maxDelay: time.Second}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, w := range want {
		if got := p.wait(i + 1); got != w*time.Millisecond {
			t.Errorf("wait after try %d = %s, want %s", i+1, got, w*time.Millisecond)
		}
	}
	p.jitter = true
	seen := map[time.Duration]bool{}
	for range 200 {
		got := p.wait(3)
		if got < 200*time.Millisecond || got > 400*time.Millisecond {
			t.Fatalf("jittered wait %s outside [200ms, 400ms]", got)
		}
		seen[got] = true
	}
	if len(seen) < 10 {
		t.Errorf("jitter gave only %d distinct waits in 200", len(seen))
	}
}

// TestRetryDo: transient failures are tried again up to the cap, each
// retry reported; a permanent one is not; a wait longer than maxRetryWait
// ends the tries; a cancelled wait ends them too.
func TestRetryDo(t *testing.T) {
	transient := errors.New("connection reset")
	permanent := errors.New("refused")
	classify := func(err error) RetryVerdict {
		if errors.Is(err, transient) {
			return RetryVerdict{Transient: true}
		}
		return RetryVerdict{}
	}
	var slept []time.Duration
	p := RetryPolicy{Attempts: 3, delay: time.Millisecond, maxDelay: time.Second,
		sleep: func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }}
	var reported []int
	onRetry := func(try int, _ error, _ time.Duration) { reported = append(reported, try) }

	calls := 0
	r := p.Do(context.Background(), func(int) error { calls++; return transient }, classify, onRetry)
	if calls != 3 || !r.GaveUp || r.Tries != 3 || !errors.Is(r.Err, transient) || len(reported) != 2 || len(slept) != 2 {
		t.Errorf("always transient: %d calls, %+v, reported %v, slept %v", calls, r, reported, slept)
	}
	calls, reported = 0, nil
	r = p.Do(context.Background(), func(try int) error {
		calls++
		if try < 2 {
			return transient
		}
		return nil
	}, classify, onRetry)
	if calls != 2 || r.Err != nil || r.Tries != 2 || len(reported) != 1 {
		t.Errorf("transient then success: %d calls, %+v, reported %v", calls, r, reported)
	}
	calls, reported = 0, nil
	r = p.Do(context.Background(), func(int) error { calls++; return permanent }, classify, onRetry)
	if calls != 1 || r.GaveUp || !errors.Is(r.Err, permanent) || len(reported) != 0 {
		t.Errorf("permanent: %d calls, %+v", calls, r)
	}
	calls = 0
	r = p.Do(context.Background(), func(int) error { calls++; return transient }, func(error) RetryVerdict {
		return RetryVerdict{Transient: true, NotBefore: 2 * maxRetryWait}
	}, nil)
	if calls != 1 || !r.GaveUp {
		t.Errorf("a reset later than maxRetryWait: %d calls, %+v", calls, r)
	}
	p.sleep = sleepCtx
	p.delay = 30 * time.Second
	p.maxDelay = 30 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r = p.Do(ctx, func(int) error { return transient }, func(error) RetryVerdict { return RetryVerdict{Transient: true} }, nil)
	if r.Interrupted == nil {
		t.Errorf("a cancelled wait: %+v", r)
	}
}

// contendedStore is a store whose ref lock wait is short, with retries
// every 100ms.
func contendedStore(t *testing.T) (*gitstate.Store, string) {
	t.Helper()
	dir := gitstatetest.NewRepo(t)
	st, err := gitstate.Open(dir, gitstate.Options{LockTimeout: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := NewRegistry(Catalog{}).Init(context.Background(), st, Origin{ID: "human:t@example.com"}); err != nil {
		t.Fatal(err)
	}
	setConfig(t, st, map[string]string{"retry.delay_ms": "100", "retry.max_attempts": "4", "retry.jitter": `"off"`})
	return st, dir
}

// TestLockContentionRetried (issue 25 item 11): another program holding
// refs/codex/state.lock past gitstate's wait does not fail the call: it is
// tried again with the retry policy, each retry reported as progress, and
// commits once the lock is free. Held for good, the call fails with
// TRANSIENT_ERROR after retry.max_attempts tries, and nothing is written.
func TestLockContentionRetried(t *testing.T) {
	st, dir := contendedStore(t)
	lock := filepath.Join(gitstatetest.Git(t, dir, "rev-parse", "--git-common-dir"), "refs", "codex", "state.lock")
	if !filepath.IsAbs(lock) {
		lock = filepath.Join(dir, lock)
	}
	if err := os.WriteFile(lock, []byte("held by another program\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var msgs []string
	ctx := WithProgress(context.Background(), func(_ int, m string) { mu.Lock(); msgs = append(msgs, m); mu.Unlock() })
	released := make(chan struct{})
	go func() {
		time.Sleep(250 * time.Millisecond)
		os.Remove(lock)
		close(released)
	}()
	reg := NewRegistry(Catalog{Tools: []*Tool{writeProbe()}})
	res := reg.CallAs(ctx, st, Origin{ID: "human:t@example.com"}, "probe_write", json.RawMessage(`{"title":"retried"}`))
	<-released
	if !res.OK {
		t.Fatalf("a call through a lock held 250ms: %+v", res.Error)
	}
	mu.Lock()
	if len(msgs) == 0 || !strings.Contains(msgs[0], `"type":"retry"`) || !strings.Contains(msgs[0], `"what":"state-lock"`) {
		t.Errorf("retries reported as %q", msgs)
	}
	mu.Unlock()
	if got := gitstatetest.Git(t, dir, "log", "-1", "--format=%s", gitstate.RefState); !strings.Contains(got, "probe_write") {
		t.Errorf("last commit %q, want the probe's write", got)
	}

	// held for good: TRANSIENT_ERROR, nothing written
	if err := os.WriteFile(lock, []byte("held\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(lock)
	tip := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)
	res = reg.CallAs(context.Background(), st, Origin{ID: "human:t@example.com"}, "probe_write", json.RawMessage(`{"title":"never"}`))
	if res.OK || res.Error.Code != TransientError || res.Error.Details["attempts"] != 4 {
		t.Fatalf("a lock held for good: %+v, want TRANSIENT_ERROR after 4 tries", res.Error)
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState); got != tip {
		t.Errorf("the state moved to %s", got)
	}
}

// TestTransientClassifiers: which failures of a remote are tried again
// (tmux's: TestTransientTmux).
func TestTransientClassifiers(t *testing.T) {
	remote := func(msg string) error { return errors.Join(gitstate.ErrRemote, errors.New(msg)) }
	for err, want := range map[error]bool{
		remote("fatal: unable to access 'https://h/': Failed to connect to h port 443: Connection refused"): true,
		remote("ssh: connect to host h port 22: Connection timed out"):                                      true,
		remote("fatal: the remote end hung up unexpectedly"):                                                true,
		remote("The requested URL returned error: 503"):                                                     true,
		remote("fatal: '/x.git' does not appear to be a git repository"):                                    false,
		remote("The requested URL returned error: 403"):                                                     false,
		errors.New("connection refused"):                                                                    false, // not the remote's
	} {
		if got := transientRemote(err); got != want {
			t.Errorf("transientRemote(%v) = %v, want %v", err, got, want)
		}
	}
}

// writeProbe is a tool that writes one record: a call that needs the
// state's writer lock.
func writeProbe() *Tool {
	type in struct {
		Title string `json:"title"`
	}
	return Define("probe_write", "probe.write", "test tool", CLI{}, func(ctx context.Context, c *Call, in in) (struct{}, error) {
		c.Summarize("%s wrote %s", c.Caller.ID, in.Title)
		return struct{}{}, c.Tx.Put("probe/"+c.Tx.NewID("p")+".json", map[string]string{"title": in.Title})
	})
}

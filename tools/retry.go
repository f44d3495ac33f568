package tools

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
)

// One way of retrying transient failures (seed 003: "retried on transient
// failures"), for every caller that meets them: a GitHub call, a writer
// that found the state's lock held past gitstate's own wait, a sync whose
// remote did not answer, an agent CLI whose pane did not start. Tries are
// capped (retry.max_attempts), waits grow from retry.delay_ms doubling to
// at most retry.max_delay_ms, with jitter (retry.jitter) so that writers
// that failed together do not all come back together, and every retry is
// reported to its caller's onRetry, which makes it visible: an audit
// record, or a progress message.

// retryKeys are the settings of retries.
func retryKeys() []ConfigKey {
	return []ConfigKey{
		{Name: "retry.max_attempts", Kind: "int", Default: 3, Doc: "tries of an operation that fails transiently (GitHub not answering, 5xx, rate limits; the state's writer lock held by another program; a sync remote not answering; an agent's tmux session not starting) before it fails with its code (TRANSIENT_ERROR for GitHub)"},
		{Name: "retry.delay_ms", Kind: "int", Default: 1000, Doc: "milliseconds before the second try; each later try waits twice as long, up to retry.max_delay_ms (a rate limit's reset time if later)"},
		{Name: "retry.max_delay_ms", Kind: "int", Default: 30000, Doc: "the longest wait between two tries, in milliseconds"},
		{Name: "retry.jitter", Kind: "string", Default: "on", OneOf: []string{"on", "off"}, Doc: "on: each wait is shortened by a random part of up to half of it, so callers that failed together come back apart; off: waits are exact"},
	}
}

// maxRetryWait bounds how long a retry waits for a time someone else set
// (a rate limit's reset); a later one ends the retries (a GitHub call
// stays PENDING for `git codex github retry`).
const maxRetryWait = time.Minute

// RetryPolicy is how an operation is retried: the retry.* settings, read
// by RetryPolicyOf, run by Do.
type RetryPolicy struct {
	Attempts int
	delay    time.Duration
	maxDelay time.Duration
	jitter   bool
	// sleep waits between tries (tests make it instant).
	sleep func(context.Context, time.Duration) error
}

// RetryPolicyOf is the policy the config sets.
func RetryPolicyOf(cfg *Config) RetryPolicy {
	return RetryPolicy{
		Attempts: max(1, cfg.IntValue("retry.max_attempts")),
		delay:    time.Duration(max(0, cfg.IntValue("retry.delay_ms"))) * time.Millisecond,
		maxDelay: time.Duration(max(0, cfg.IntValue("retry.max_delay_ms"))) * time.Millisecond,
		jitter:   cfg.StringValue("retry.jitter") != "off",
		sleep:    sleepCtx,
	}
}

// defaultRetryPolicy is the policy of an unset config, for callers that
// have none to read (the state is what could not be written).
func defaultRetryPolicy() RetryPolicy {
	return RetryPolicyOf(&Config{Entries: map[string]ConfigEntry{}, keys: &ConfigKeys{keys: retryKeys()}})
}

// wait is the pause after failed try number try (from 1): the delay
// doubled try-1 times, capped, less the jitter.
func (p RetryPolicy) wait(try int) time.Duration {
	d := p.delay
	for i := 1; i < try && d < p.maxDelay; i++ {
		d *= 2
	}
	if p.maxDelay > 0 && d > p.maxDelay {
		d = p.maxDelay
	}
	if p.jitter && d > 1 {
		d -= time.Duration(rand.Int64N(int64(d / 2)))
	}
	return d
}

// RetryVerdict is what a failure means for retrying: whether another try
// may succeed, and how long it must wait at least (a rate limit's reset).
type RetryVerdict struct {
	Transient bool
	NotBefore time.Duration
}

// Retried is how a retried operation ended (Do).
type Retried struct {
	Tries int   // tries made
	Err   error // the last try's error; nil: it succeeded
	// GaveUp: the last failure was transient but no try was left (or its
	// wait was longer than maxRetryWait); Interrupted: ctx ended while
	// waiting, with this error.
	GaveUp      bool
	Interrupted error
}

// Do runs op (try counts from 1) until it succeeds, fails for good
// (classify says not transient), or the tries run out. onRetry, if set, is
// told of each failed try that will be tried again, and the wait, before
// the wait.
func (p RetryPolicy) Do(ctx context.Context, op func(try int) error, classify func(error) RetryVerdict, onRetry func(try int, err error, wait time.Duration)) Retried {
	for try := 1; ; try++ {
		err := op(try)
		if err == nil {
			return Retried{Tries: try}
		}
		v := classify(err)
		if !v.Transient {
			return Retried{Tries: try, Err: err}
		}
		wait := p.wait(try)
		if v.NotBefore > wait {
			wait = v.NotBefore
		}
		if try >= p.Attempts || wait > maxRetryWait {
			return Retried{Tries: try, Err: err, GaveUp: true}
		}
		if onRetry != nil {
			onRetry(try, err, wait)
		}
		if werr := p.sleep(ctx, wait); werr != nil {
			return Retried{Tries: try, Err: err, Interrupted: werr}
		}
	}
}

// sleepCtx waits d, or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// lockContention reports whether a transaction failed because another
// program held the state's ref lock past gitstate's own wait, or moved the
// ref under it (the git CLI: pack-refs, update-ref, a fetch): nothing was
// written, and trying again is safe.
func lockContention(err error) bool {
	return errors.Is(err, gitstate.ErrLockTimeout) || errors.Is(err, gitstate.ErrRefMoved)
}

// retryContended tries a transaction that met lock contention (first, its
// error) again with the config's retry policy, each retry told to the
// caller as progress, and returns the last try's error.
func retryContended(ctx context.Context, st *gitstate.Store, keys *ConfigKeys, tool string, first error, try func() error) error {
	pol := defaultRetryPolicy()
	if cfg, err := ConfigAt(ctx, st, keys); err == nil {
		pol = RetryPolicyOf(cfg)
	}
	progress := ProgressOf(ctx)
	done := pol.Do(ctx, func(n int) error {
		if n == 1 {
			return first
		}
		return try()
	}, func(err error) RetryVerdict {
		return RetryVerdict{Transient: lockContention(err)}
	}, func(n int, err error, wait time.Duration) {
		if progress != nil {
			progress(n, retryMessage(tool, "state-lock", n, pol.Attempts, wait, err))
		}
	})
	if done.GaveUp {
		return Errorf(TransientError, "%s: the state's ref stayed locked or kept moving (another program: git pack-refs, update-ref, fetch?) through %d tries; nothing was written: %v", tool, done.Tries, done.Err).
			With("attempts", done.Tries).With("reason", "lock")
	}
	return done.Err
}

// retryMessage is a retry as a progress message: one JSON object, as a
// delegated turn's messages are.
func retryMessage(tool, what string, try, of int, wait time.Duration, err error) string {
	b, _ := json.Marshal(map[string]any{"type": "retry", "tool": tool, "what": what, "attempt": try, "of": of,
		"wait_ms": wait.Milliseconds(), "error": RedactMessage(err.Error())})
	return string(b)
}

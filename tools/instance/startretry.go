package instance

import (
	"context"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/tmux"
	"github.com/gitcodex/git-codex/tools"
)

// startSession makes an instance's tmux session, trying again (retry.*)
// when tmux failed in a way that passes: its server went away while the
// session was being made, or did not answer (several git codex processes
// starting the first server of a socket at once). Each failed try is an
// audit record of the instance (TRANSIENT_ERROR), as a GitHub call's are.
func startSession(ctx context.Context, f *tools.Followup, cfg *tools.Config, r tmux.Runner, a tools.Agent, spec tmux.SessionSpec) error {
	pol := tools.RetryPolicyOf(cfg)
	done := pol.Do(ctx, func(int) error {
		_, err := r.NewSession(ctx, spec)
		return err
	}, func(err error) tools.RetryVerdict {
		return tools.RetryVerdict{Transient: transientTmux(err)}
	}, func(try int, err error, wait time.Duration) {
		tryErr := tools.Errorf(tools.TransientError, "starting %s's tmux session: try %d of %d failed: %v; trying again in %s", a.ID, try, pol.Attempts, err, wait.Round(time.Millisecond)).
			With("instance_id", a.ID).With("attempt", try).With("wait_ms", wait.Milliseconds())
		_ = f.Record(ctx, func(c *tools.Call) error {
			c.Target(a.ID)
			return tryErr
		})
	})
	if done.Interrupted != nil {
		return done.Interrupted
	}
	return done.Err
}

// transientTmux reports whether tmux failed for a reason that passes: a
// server that exited or was lost while it was asked, or a socket that did
// not answer. A duplicate name, a bad directory or a missing binary do not.
func transientTmux(err error) bool {
	if err == nil {
		return false
	}
	msg := strings.ToLower(err.Error())
	for _, w := range []string{"server exited unexpectedly", "lost server", "error connecting", "connection refused", "temporarily unavailable", "timed out"} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

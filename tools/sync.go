package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
)

// SyncResult is what Sync did: the store's account, and the conflicts the
// merge settled (granted on both sides; see restoreInvariants).
type SyncResult struct {
	gitstate.SyncResult
	Conflicts []Conflict
	// Retries are the tries that failed because the remote did not answer
	// and were tried again (retry.*).
	Retries []RetryNote
	// Ignored are values of this machine's settings (launchers,
	// github.api_url, paths: localconfig.go) that the sync brought into
	// the state, new or changed: they are never read.
	Ignored []IgnoredSetting
}

// Sync merges the remote's git codex state into the local one and, with
// push, publishes the result: fetch, deterministic merge (MergeRecord, then
// restoreInvariants for resources granted on both sides), notes by union of
// lines, push, again if the remote moved meanwhile. It is the
// registry-internal tool "sync" (entry.go): the caller o is admitted
// against the local state first (refused, and recorded, like a call), and
// the merge commit is its audit record.
func (r *Registry) Sync(ctx context.Context, st *gitstate.Store, o Origin, remote string, push bool, progress io.Writer) (SyncResult, error) {
	raw, _ := json.Marshal(map[string]any{"remote": remote, "push": push})
	args := redactArgs(raw) // a remote may be a URL with a token in it
	admitted, err := r.admitTo(ctx, st, o, r.internal["sync"], args)
	if err != nil {
		return SyncResult{}, err
	}
	var conflicts []Conflict // settled by every round's merge
	finish := func(tx *gitstate.Tx, report gitstate.MergeReport) error {
		c := &Call{Caller: admitted.Caller, Tx: tx, tool: "sync", args: args, auth: admitted.auth, keys: admitted.keys}
		settled, err := r.settleClaims(tx, report)
		if err != nil {
			return err
		}
		conflicts = append(conflicts, settled...)
		kept := ""
		if len(report.Kept) > 0 {
			kept = fmt.Sprintf(", %d kept that one side deleted", len(report.Kept))
		}
		c.Summarize("%s merged the state of %s (%d record(s) changed on both sides, %d conflict(s)%s%s)",
			o.ID, redactName(remote), len(report.Resolved), len(settled), droppedNote(len(report.Dropped)), kept)
		tx.SetMeta(auditRecord(c, nil))
		return nil
	}
	before := r.ignoredAt(ctx, st)
	pol := defaultRetryPolicy()
	if cfg, err := ConfigAt(ctx, st, r.keys()); err == nil {
		pol = RetryPolicyOf(cfg)
	}
	var res gitstate.SyncResult
	var retries []RetryNote
	done := pol.Do(ctx, func(int) error {
		conflicts = nil // a sync tried again starts afresh
		var err error
		res, err = st.Sync(ctx, remote, gitstate.SyncOptions{
			Resolve: r.kinds.MergeRecord, Validate: r.kinds.ValidateRecord, ValidateCommit: ValidateCommit, Layout: r.kinds.Layout(), Finish: finish, Push: push, Progress: progress,
		})
		return err
	}, func(err error) RetryVerdict {
		return RetryVerdict{Transient: transientRemote(err)}
	}, func(try int, err error, wait time.Duration) {
		n := RetryNote{Attempt: try, Of: pol.Attempts, WaitMS: wait.Milliseconds(), Error: RedactMessage(err.Error())}
		retries = append(retries, n)
		if progress != nil {
			fmt.Fprintf(progress, "%s did not answer (try %d of %d): %s; trying again in %s\n", redactName(remote), try, pol.Attempts, n.Error, wait.Round(time.Millisecond))
		}
	})
	err = done.Err
	if done.Interrupted != nil {
		err = fmt.Errorf("%w (interrupted while waiting to try again: %v)", err, done.Interrupted)
	}
	out := SyncResult{SyncResult: res, Conflicts: conflicts, Retries: retries}
	if err == nil {
		for _, a := range r.ignoredAt(ctx, st) {
			if b, ok := before[a.Key]; !ok || b.Clock != a.Clock || b.SetBy != a.SetBy || !b.SetAt.Equal(a.SetAt) {
				out.Ignored = append(out.Ignored, a)
			}
		}
		sort.Slice(out.Ignored, func(i, j int) bool { return out.Ignored[i].Key < out.Ignored[j].Key })
	}
	serr := syncError(remote, err)
	var te *Error
	if errors.As(serr, &te) && te.Code == RemoteError && done.Tries > 1 {
		te.With("attempts", done.Tries)
	}
	return out, serr
}

// RetryNote is one failed try that was tried again.
type RetryNote struct {
	Attempt int    `json:"attempt"`
	Of      int    `json:"of"`
	WaitMS  int64  `json:"wait_ms"`
	Error   string `json:"error"`
}

// transientRemote reports whether a sync failed because its remote did not
// answer, in a way that may pass: seed 003's patterns (timeout,
// connection, network) and git's words for a dropped or refused
// connection. A remote that refused, or is not a repository, is not.
func transientRemote(err error) bool {
	if !errors.Is(err, gitstate.ErrRemote) || errors.Is(err, gitstate.ErrPushRefused) {
		return false
	}
	msg := strings.ToLower(err.Error())
	for _, w := range []string{"timeout", "timed out", "connection", "network", "could not resolve host", "hung up unexpectedly",
		"early eof", "temporarily unavailable", "temporary failure", "returned error: 502", "returned error: 503", "returned error: 504"} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// ignoredAt are the values of local settings the state at the tip holds
// (IgnoredSettings), by key; none when it cannot be read.
func (r *Registry) ignoredAt(ctx context.Context, st *gitstate.Store) map[string]IgnoredSetting {
	out := map[string]IgnoredSetting{}
	st.View(ctx, func(sn *gitstate.Snapshot) error {
		if sn.Commit() == "" {
			return nil
		}
		list, err := r.IgnoredSettings(sn)
		for _, s := range list {
			out[s.Key] = s
		}
		return err
	})
	return out
}

// ValidateCommit checks a commit a peer's state brings, beyond the store's
// own checks of its message (text, one Codex-Clock from 1) and signatures:
// it is an audit event as the tools write them, naming its tool
// (Codex-Tool), by a caller whose id is one (the author's name: an agent
// id, or human:<email>; or the committer itself), with trailers whose keys
// are words. A peer that
// can push can still write any record; what it cannot do is make the
// audit trail unreadable, or the clock restart.
func ValidateCommit(c gitstate.IncomingCommit) error {
	tool := ""
	for _, t := range c.Trailers {
		if !trailerKey(t.Key) {
			return fmt.Errorf("its trailer key %q is not a word", t.Key)
		}
		if t.Key == gitstate.TrailerTool {
			tool = t.Value
		}
	}
	if tool == "" {
		return fmt.Errorf("it names no tool (%s): not an audit event git codex writes", gitstate.TrailerTool)
	}
	if err := ValidateCallerID(c.Author.Name); err != nil && c.Author != c.Committer {
		// (a commit the store wrote with no caller to name is its
		// committer's)
		return fmt.Errorf("its author %q is not a caller id (an agent id, or human:<email>)", c.Author.Name)
	}
	return nil
}

// trailerKey: letters, digits and '-', as git's trailers are.
func trailerKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// droppedNote explains records the merge left out, if any: a record on one
// side where the other has a directory of records (the directory wins; both
// versions stay in the merged histories).
func droppedNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d record(s) dropped where the other side has a directory", n)
}

// syncError gives sync failures their codes and a hint.
func syncError(remote string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gitstate.ErrPushRejected):
		return Errorf(PushRejected, "%s kept moving while we synced (another clone is writing and syncing without pause): "+
			"run `git codex sync %s` again in a moment; if it keeps failing, pause the busy clone's syncs while this one runs: %v", remote, remote, err).
			With("remote", remote).With("reason", err.Error())
	case errors.Is(err, gitstate.ErrInvalidState):
		return Errorf(InvalidRemoteState, "refused to merge the state of %s, nothing local changed: %v; "+
			"whoever can push to %s must restore its refs/codex/state (or notes) to a state git codex wrote, e.g. from a clone's", remote, err, remote).With("remote", remote)
	case errors.Is(err, gitstate.ErrPushRefused):
		return Errorf(RemoteError, "%s refused the state (nothing local changed; retrying will not help until whoever runs %s allows it): %v", remote, remote, err).With("remote", remote).With("reason", "refused")
	case errors.Is(err, gitstate.ErrRemote):
		return Errorf(RemoteError, "cannot sync with %s: %v", remote, err).With("remote", remote)
	}
	return StoreError(err)
}

// settleClaims runs the SettleClaims hook, if any (Hooks).
func (r *Registry) settleClaims(tx *gitstate.Tx, report gitstate.MergeReport) ([]Conflict, error) {
	if r.hooks.SettleClaims == nil {
		return nil, nil
	}
	return r.hooks.SettleClaims(r.kinds, tx, report)
}

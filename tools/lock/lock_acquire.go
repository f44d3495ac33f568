package lock

import (
	"context"
	"time"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/mail"
)

// LockAcquireIn is lock_acquire's input: a named lock (name), or the lock
// of a cycle (session_token, seed 001's lock.acquire); exactly one.
type LockAcquireIn struct {
	Name         string `json:"name,omitempty" jsonschema:"any text, e.g. src/api"`
	Reason       string `json:"reason,omitempty" jsonschema:"shown to whoever finds it taken"`
	TTLSeconds   int    `json:"ttl_seconds,omitempty" jsonschema:"free after this many seconds (default: until released)"`
	SessionToken string `json:"session_token,omitempty" jsonschema:"a cycle session's token, instead of name" text:"credential"`
	Feature      string `json:"feature,omitempty" jsonschema:"the cycle's feature, when several run"`
}

// LockAcquired is what lock_acquire returns: the lock, and for a cycle's
// lock the cycle, the role and a fresh lock token (shown only here; the
// state keeps its hash, and the previous token stops working).
type LockAcquired struct {
	Lock
	CycleID   string `json:"cycle_id,omitempty"`
	Role      string `json:"role,omitempty"`
	LockToken string `json:"lock_token,omitempty" jsonschema:"the cycle's lock token, for handoff_write, cycle_complete and cycle_archive"`
}

// CycleLock issues the lock token of a cycle to its session's role
// (lock_acquire {session_token}, seed 001's lock.acquire). Sessions and
// the steps of a cycle are tools/cycle's, above this package: the
// assembly hands cycle's to Catalog.
type CycleLock func(c *tools.Call, sessionToken, feature string) (LockAcquired, error)

// LockAcquire is the tool that takes a named lock for the caller, or with
// a session token the lock of its cycle, through cycleLock.
func LockAcquire(cycleLock CycleLock) *tools.Tool {
	return tools.Define("lock_acquire", "lock.acquire",
		"Lock a shared resource by name before working on it: LOCK_DENIED if someone else holds it; yours again renews it. Release with lock_release. With session_token instead: the lock token of its cycle (active role only).",
		tools.CLI{Path: "lock acquire", Args: []string{"name"}},
		func(ctx context.Context, c *tools.Call, in LockAcquireIn) (LockAcquired, error) {
			switch {
			case (in.Name == "") == (in.SessionToken == ""):
				return LockAcquired{}, tools.Errorf(tools.InvalidInput, "give exactly one of name (a named lock) and session_token (a cycle's lock)").With("name", in.Name)
			case in.SessionToken != "":
				if in.Reason != "" || in.TTLSeconds != 0 {
					return LockAcquired{}, tools.Errorf(tools.InvalidInput, "a cycle's lock takes no reason or ttl_seconds")
				}
				return cycleLock(c, in.SessionToken, in.Feature)
			case in.Feature != "":
				return LockAcquired{}, tools.Errorf(tools.InvalidInput, "feature goes with session_token, not name")
			}
			l, err := acquireNamed(c, in)
			return LockAcquired{Lock: l}, err
		})
}

// acquireNamed takes a named lock.
func acquireNamed(c *tools.Call, in LockAcquireIn) (Lock, error) {
	if err := validLockName(in.Name); err != nil {
		return Lock{}, err
	}
	if err := reservedLockName(in.Name); err != nil {
		return Lock{}, err
	}
	if in.TTLSeconds < 0 || in.TTLSeconds > maxLockTTL {
		return Lock{}, tools.Errorf(tools.InvalidInput, "ttl_seconds must be between 0 (no expiry) and %d (a year)", maxLockTTL).With("field", "ttl_seconds")
	}
	if limit := c.Config.IntValue("mail.max_body_bytes"); len(in.Reason) > limit {
		return Lock{}, tools.Errorf(tools.InvalidInput, "reason is %d bytes; the limit is %d (config mail.max_body_bytes)", len(in.Reason), limit).
			With("field", "reason").With("size", len(in.Reason)).With("limit", limit)
	}
	tx := c.Tx
	l, err := Get(tx, in.Name)
	if err != nil {
		return Lock{}, err
	}
	now := tx.Now()
	c.Target(in.Name)
	if l.Claim != nil && l.Claim.Holder != c.Caller.ID && !l.expired(now) {
		e := tools.Errorf(tools.LockDenied, "lock %q is held by %s since %s; wait for it, or ask a person or supervisor to `git codex lock release %q --force`",
			in.Name, l.Claim.Holder, l.Claim.At.Format(time.RFC3339), in.Name).With("name", in.Name).With("holder", l.Claim.Holder).With("since", l.Claim.At)
		if l.ExpiresAt != nil {
			e = e.With("expires_at", *l.ExpiresAt)
		}
		return Lock{}, e
	}
	if l.Claim != nil && l.Claim.Holder != c.Caller.ID {
		// taken over after its time ran out: tell the holder
		if err := NotifyTaken(c, "lock", in.Name, l.Claim.Holder, "taken by "+c.Caller.ID+" after its ttl ran out"); err != nil {
			return Lock{}, err
		}
	}
	if l.Claim == nil || l.Claim.Holder != c.Caller.ID {
		l.Claim = &tools.Claim{Holder: c.Caller.ID, Clock: tx.Clock(), At: now}
	}
	l.Reason, l.ExpiresAt = in.Reason, nil
	if in.TTLSeconds > 0 {
		exp := now.Add(time.Duration(in.TTLSeconds) * time.Second)
		l.ExpiresAt = &exp
	}
	l.UpdatedAt, l.UpdatedBy, l.Clock = now, c.Caller.ID, tx.Clock()
	c.Summarize("%s took lock %s", c.Caller.ID, mail.OneLineCut(in.Name))
	if err := tx.Put(Path(in.Name), l); err != nil {
		return Lock{}, err
	}
	return l, mail.TouchAgent(c)
}

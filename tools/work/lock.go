package work

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/mail"
)

// Lock is a named advisory lock: agents take one before touching a shared
// resource ("db-migrations", "release", a directory) so that only one works
// on it at a time. One holder at most, also across machines: sync settles a
// lock granted on two machines for the earlier claim (see Conflict).
// Mutable: Clock is the Lamport time of its last change.
type Lock struct {
	Name      string       `json:"name"`
	Claim     *tools.Claim `json:"claim" jsonschema:"who holds the lock; null when it is free"`
	Reason    string       `json:"reason,omitempty"`
	ExpiresAt *time.Time   `json:"expires_at,omitempty" jsonschema:"after this time anyone may take the lock"`
	UpdatedAt time.Time    `json:"updated_at"`
	UpdatedBy string       `json:"updated_by"`
	// TokenHash and Cycle belong to a cycle's lock ("cycle/<feature>"):
	// the hash of the lock token lock_acquire issued last, and the cycle
	// itself (see Cycle). Both go with the claim in a merge.
	TokenHash string         `json:"token_hash,omitempty"`
	Cycle     *Cycle         `json:"cycle,omitempty"`
	Clock     gitstate.Clock `json:"clock"`
}

const dirLocks = "locks"

// lockKind: locks/<x>/<y>/<key>.json, the key a hash of the lock's name.
// One holder at a time.
func lockKind() tools.Kind {
	k := tools.Kind{Name: "lock", Dir: dirLocks, Depth: 3, Fanout: 2, Kept: true, Claim: &tools.ClaimRule{Resource: "name", Coupled: []string{"reason", "expires_at", "token_hash", "cycle"},
		EveryClaimGrants: isCycleLock}}
	return tools.RecordKind(k, func(rel []string, _ string, l *Lock) error {
		if err := validLockName(l.Name); err != nil {
			return err
		}
		if lockPath(l.Name) != dirLocks+"/"+strings.Join(rel, "/") {
			return fmt.Errorf("lock record %q does not belong at this path", l.Name)
		}
		if err := validateCycleLock(*l); err != nil {
			return err
		}
		return tools.ValidClaim(l.Claim)
	})
}

// lockPath is where a lock's record lives. Lock names are free text (a
// path is a fine name), so the file is named by a hash of the name and
// fans out by it.
func lockPath(name string) string {
	sum := sha256.Sum256([]byte(name))
	key := hex.EncodeToString(sum[:10])
	return dirLocks + "/" + gitstate.Fanout(key) + "/" + key + ".json"
}

// validLockName reports 1–200 bytes of printable UTF-8 with no leading or
// trailing space.
func validLockName(name string) error {
	ok := len(name) > 0 && len(name) <= 200 && utf8.ValidString(name) && strings.TrimSpace(name) == name
	for _, r := range name {
		ok = ok && unicode.IsPrint(r)
	}
	if !ok {
		return tools.Errorf(tools.InvalidInput, "invalid lock name %q: use 1-200 printable characters, no leading or trailing space", name).With("name", name)
	}
	return nil
}

// expired reports whether the lock's time is up at now.
func (l Lock) expired(now time.Time) bool {
	return l.ExpiresAt != nil && !now.Before(*l.ExpiresAt)
}

// maxLockTTL is the longest ttl_seconds: a year. (Longer would overflow
// time.Duration soon enough; a lock that long wants no ttl at all.)
const maxLockTTL = 365 * 24 * 3600

// getLock reads a lock's record; a lock never taken is free.
func getLock(tx *gitstate.Tx, name string) (Lock, error) {
	l := Lock{Name: name}
	err := tx.Get(lockPath(name), &l)
	if errors.Is(err, gitstate.ErrNotFound) {
		return Lock{Name: name}, nil
	}
	return l, err
}

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

// LockAcquire takes a named lock for the caller.
var LockAcquire = tools.Define("lock_acquire", "lock.acquire",
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
			return acquireCycleLock(c, in.SessionToken, in.Feature)
		case in.Feature != "":
			return LockAcquired{}, tools.Errorf(tools.InvalidInput, "feature goes with session_token, not name")
		}
		l, err := acquireNamed(c, in)
		return LockAcquired{Lock: l}, err
	})

// acquireCycleLock issues a new lock token to the session's role, the
// active role of its cycle, which holds the cycle's lock.
func acquireCycleLock(c *tools.Call, sessionToken, feature string) (LockAcquired, error) {
	s, ac, err := sessionCycle(c, sessionToken, feature)
	if err != nil {
		return LockAcquired{}, err
	}
	cy := ac.cycle
	c.Target(cy.CycleID)
	if s.Role != cy.ActiveRole || ac.lock.Claim == nil || ac.lock.Claim.Holder != s.Role {
		return LockAcquired{}, tools.Errorf(tools.LockDenied, "role is not active for the current phase (%s of cycle %s: %s)", cy.Phase, cy.CycleID, cy.ActiveRole).
			With("activeRole", cy.ActiveRole).With("requestedRole", s.Role)
	}
	token := tools.NewSecret(tools.PrefixLockToken)
	ac.lock.TokenHash = tools.HashSecret(token)
	c.Summarize("%s took the lock of cycle %s as %s", c.Caller.ID, cy.CycleID, s.Role)
	if err := putCycle(c, ac); err != nil {
		return LockAcquired{}, err
	}
	out := ac.lock
	out.Cycle = nil
	return LockAcquired{Lock: out, CycleID: cy.CycleID, Role: s.Role, LockToken: token}, nil
}

// reservedLockName refuses the names of cycle locks in the named-lock
// tools: a cycle's lock moves only with its phase.
func reservedLockName(name string) error {
	if strings.HasPrefix(name, cycleLockPrefix) {
		return tools.Errorf(tools.InvalidInput, "lock names starting %q belong to cycles; a cycle's lock comes with lock_acquire {session_token}", cycleLockPrefix).With("name", name)
	}
	return nil
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
	l, err := getLock(tx, in.Name)
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
		if err := notifyTaken(c, "lock", in.Name, l.Claim.Holder, "taken by "+c.Caller.ID+" after its ttl ran out"); err != nil {
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
	if err := tx.Put(lockPath(in.Name), l); err != nil {
		return Lock{}, err
	}
	return l, mail.TouchAgent(c)
}

// LockReleaseIn is lock_release's input.
type LockReleaseIn struct {
	Name  string `json:"name" jsonschema:"the lock's name"`
	Force bool   `json:"force,omitempty" jsonschema:"release a lock someone else holds (people and supervisors only); the holder is mailed"`
}

// LockRelease frees a named lock.
var LockRelease = tools.Define("lock_release", "lock.release",
	"Release a named lock you hold. People and supervisors may release anyone's with force: true, and the holder is told by mail.",
	tools.CLI{Path: "lock release", Args: []string{"name"}},
	func(ctx context.Context, c *tools.Call, in LockReleaseIn) (Lock, error) {
		if err := validLockName(in.Name); err != nil {
			return Lock{}, err
		}
		if err := reservedLockName(in.Name); err != nil {
			return Lock{}, err
		}
		tx := c.Tx
		l, err := getLock(tx, in.Name)
		if err != nil {
			return Lock{}, err
		}
		c.Target(in.Name)
		if l.Claim == nil {
			return Lock{}, tools.Errorf(tools.ResourceNotFound, "lock %q is not held; see held locks with `git codex lock list`", in.Name).With("name", in.Name)
		}
		holder := l.Claim.Holder
		if holder != c.Caller.ID {
			if !in.Force || !tools.MayForce(c.Caller.Type) {
				return Lock{}, tools.Errorf(tools.LockDenied, "lock %q is held by %s, not by you; only a person or a supervisor may release it, with force", in.Name, holder).
					With("name", in.Name).With("holder", holder)
			}
			if err := notifyTaken(c, "lock", in.Name, holder, "released by "+c.Caller.ID); err != nil {
				return Lock{}, err
			}
		}
		now := tx.Now()
		l.Claim, l.Reason, l.ExpiresAt = nil, "", nil
		l.UpdatedAt, l.UpdatedBy, l.Clock = now, c.Caller.ID, tx.Clock()
		c.Summarize("%s released lock %s", c.Caller.ID, mail.OneLineCut(in.Name))
		if err := tx.Put(lockPath(in.Name), l); err != nil {
			return Lock{}, err
		}
		return l, mail.TouchAgent(c)
	}).Hint(tools.Hints{Idempotent: true})

// notifyTaken mails a holder whose claim someone else ended or changed;
// how says what happened ("released by boss").
func notifyTaken(c *tools.Call, kind, resource, holder, how string) error {
	_, err := mail.Post(c, tools.InboxFor(holder), "Your "+kind+" "+resource+" was "+how,
		"You no longer hold "+kind+" "+resource+": it was "+how+".", "")
	return err
}

// LockListIn is lock_list's input.
type LockListIn struct {
	Holder string `json:"holder,omitempty" jsonschema:"only locks this agent or person holds"`
}

// LockList is what lock_list returns, sorted by name.
type LockList struct {
	Count int    `json:"count"`
	Locks []Lock `json:"locks"`
}

// LockListTool lists the held locks.
var LockListTool = tools.Define("lock_list", "lock.list",
	"List the locks held now (expired ones included, with expires_at in the past), optionally only one holder's.",
	tools.CLI{Path: "lock list"},
	func(ctx context.Context, c *tools.Call, in LockListIn) (LockList, error) {
		out := LockList{Locks: []Lock{}}
		err := tools.WalkJSON(c.Tx, dirLocks, func(l Lock) {
			if l.Claim != nil && (in.Holder == "" || l.Claim.Holder == in.Holder) {
				l.Cycle = nil // cycle_status shows it
				out.Locks = append(out.Locks, l)
			}
		})
		sort.Slice(out.Locks, func(i, j int) bool { return out.Locks[i].Name < out.Locks[j].Name })
		out.Count = len(out.Locks)
		c.Summarize("%s listed %d lock(s)", c.Caller.ID, out.Count)
		return out, err
	}).Hint(tools.Hints{ReadOnly: true, Idempotent: true})

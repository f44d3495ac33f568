// Package lock is git codex's named locks: the Lock record
// (locks/<x>/<y>/<key>.json), its tools (lock_acquire, lock_release,
// lock_list, one file each), and what the nouns above use of it (Get,
// Path, NotifyTaken). A cycle's lock is a Lock too, carrying its Cycle
// (cycle.go, with its Workflow in workflow.go): the record and its check
// are here, the tools that move a cycle are tools/cycle's, which hands
// lock_acquire {session_token} its CycleLock through the assembly. Above
// mail (lock reasons share mail's size limit, holders are told by mail).
package lock

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
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

const Dir = "locks"

// lockKind: locks/<x>/<y>/<key>.json, the key a hash of the lock's name.
// One holder at a time.
func lockKind() tools.Kind {
	k := tools.Kind{Name: "lock", Dir: Dir, Depth: 3, Fanout: 2, Kept: true, Claim: &tools.ClaimRule{Resource: "name", Coupled: []string{"reason", "expires_at", "token_hash", "cycle"},
		EveryClaimGrants: isCycleLock}}
	return tools.RecordKind(k, func(rel []string, _ string, l *Lock) error {
		if err := validLockName(l.Name); err != nil {
			return err
		}
		if Path(l.Name) != Dir+"/"+strings.Join(rel, "/") {
			return fmt.Errorf("lock record %q does not belong at this path", l.Name)
		}
		if err := validateCycleLock(*l); err != nil {
			return err
		}
		return tools.ValidClaim(l.Claim)
	})
}

// Path is where a lock's record lives. Lock names are free text (a
// path is a fine name), so the file is named by a hash of the name and
// fans out by it.
func Path(name string) string {
	sum := sha256.Sum256([]byte(name))
	key := hex.EncodeToString(sum[:10])
	return Dir + "/" + gitstate.Fanout(key) + "/" + key + ".json"
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

// Get reads a lock's record; a lock never taken is free.
func Get(tx *gitstate.Tx, name string) (Lock, error) {
	l := Lock{Name: name}
	err := tx.Get(Path(name), &l)
	if errors.Is(err, gitstate.ErrNotFound) {
		return Lock{Name: name}, nil
	}
	return l, err
}

// reservedLockName refuses the names of cycle locks in the named-lock
// tools: a cycle's lock moves only with its phase.
func reservedLockName(name string) error {
	if strings.HasPrefix(name, CyclePrefix) {
		return tools.Errorf(tools.InvalidInput, "lock names starting %q belong to cycles; a cycle's lock comes with lock_acquire {session_token}", CyclePrefix).With("name", name)
	}
	return nil
}

// NotifyTaken mails a holder whose claim someone else ended or changed;
// how says what happened ("released by boss").
func NotifyTaken(c *tools.Call, kind, resource, holder, how string) error {
	_, err := mail.Post(c, tools.InboxFor(holder), "Your "+kind+" "+resource+" was "+how,
		"You no longer hold "+kind+" "+resource+": it was "+how+".", "")
	return err
}

// Catalog is lock's tools and record kind, for the assembly
// (tools/builtin); cycleLock serves lock_acquire {session_token}.
func Catalog(cycleLock CycleLock) tools.Catalog {
	return tools.Catalog{
		Tools: []*tools.Tool{LockAcquire(cycleLock), LockRelease, LockListTool},
		Kinds: []tools.Kind{lockKind()},
	}
}

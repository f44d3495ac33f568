package lock

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/mail"
)

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
		l, err := Get(tx, in.Name)
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
			if err := NotifyTaken(c, "lock", in.Name, holder, "released by "+c.Caller.ID); err != nil {
				return Lock{}, err
			}
		}
		now := tx.Now()
		l.Claim, l.Reason, l.ExpiresAt = nil, "", nil
		l.UpdatedAt, l.UpdatedBy, l.Clock = now, c.Caller.ID, tx.Clock()
		c.Summarize("%s released lock %s", c.Caller.ID, mail.OneLineCut(in.Name))
		if err := tx.Put(Path(in.Name), l); err != nil {
			return Lock{}, err
		}
		return l, mail.TouchAgent(c)
	}).Hint(tools.Hints{Idempotent: true})

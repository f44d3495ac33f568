package lock

import (
	"context"
	"sort"

	"github.com/gitcodex/git-codex/tools"
)

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
		err := tools.WalkJSON(c.Tx, Dir, func(l Lock) {
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

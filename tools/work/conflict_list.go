package work

import (
	"context"
	"sort"

	"github.com/gitcodex/git-codex/tools"
)

// ConflictListIn is conflict_list's input.
type ConflictListIn struct {
	Kind  string `json:"kind,omitempty" jsonschema:"only conflicts over this kind of record: lock, task or review"`
	Loser string `json:"loser,omitempty" jsonschema:"only conflicts this holder lost (an agent id or human:<email>)"`
}

// ConflictList is what conflict_list returns, newest first.
type ConflictList struct {
	Count     int              `json:"count"`
	Conflicts []tools.Conflict `json:"conflicts"`
}

// ConflictListTool lists the conflicts sync has settled.
var ConflictListTool = tools.Define("conflict_list", "conflict.list",
	"List the conflicts sync settled: a lock, task or review granted to two holders on two machines while they were apart. The earlier claim won; each record keeps the loser's version.",
	tools.CLI{Path: "conflict list"},
	func(ctx context.Context, c *tools.Call, in ConflictListIn) (ConflictList, error) {
		out := ConflictList{Conflicts: []tools.Conflict{}}
		err := tools.WalkJSON(c.Tx, tools.DirConflicts, func(k tools.Conflict) {
			if (in.Kind == "" || k.Kind == in.Kind) && (in.Loser == "" || k.Loser.Holder == in.Loser) {
				out.Conflicts = append(out.Conflicts, k)
			}
		})
		sort.Slice(out.Conflicts, func(i, j int) bool { return out.Conflicts[i].ID > out.Conflicts[j].ID })
		out.Count = len(out.Conflicts)
		c.Summarize("%s listed %d conflict(s)", c.Caller.ID, out.Count)
		return out, err
	}).Hint(tools.Hints{ReadOnly: true, Idempotent: true})

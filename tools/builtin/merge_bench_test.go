package builtin_test

import (
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/gitcodex/git-codex/tools/lock"
)

// BenchmarkMergeRecord: the cost of deciding one record both sides changed,
// for the three rules a sync meets most: an agent merged field by field,
// a mail read on both sides, and a lock granted on both (a conflict). A
// sync pays it once per record changed on both sides (600 in
// gitstate's MergeDiverged10k).
func BenchmarkMergeRecord(b *testing.B) {
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	base := tools.Agent{ID: "w", Type: tools.TypeWorker, State: "idle", CreatedBy: "human:x", CreatedAt: now, UpdatedAt: now, UpdatedBy: "human:x", Clock: 3}
	ours, theirs := base, base
	ours.State, ours.UpdatedBy, ours.Clock = "busy", "w", 8
	theirs.Worktree, theirs.UpdatedBy, theirs.Clock = "/wt/w", "human:y", 5
	lockAt := func(holder string, clock gitstate.Clock) lock.Lock {
		return lock.Lock{Name: "db", Claim: &tools.Claim{Holder: holder, Clock: clock, At: now}, UpdatedAt: now, UpdatedBy: holder, Clock: clock}
	}
	lo, lt := lockAt("w1", 4), lockAt("w2", 6)
	cases := []struct {
		name, path         string
		base, ours, theirs []byte
	}{
		{"agent-fields", "agents/w.json", mustJSON(b, base), mustJSON(b, ours), mustJSON(b, theirs)},
		{"mail-read", "mail/bob/0/1/m-01.json", mustJSON(b, mailAt(3, false)), mustJSON(b, mailAt(5, true)), mustJSON(b, mailAt(9, true))},
		{"lock-conflict", "locks/a/b/0123456789abcdef00ab.json", mustJSON(b, lock.Lock{Name: "db"}), mustJSON(b, lo), mustJSON(b, lt)},
	}
	kinds := builtin.Registry().Kinds()
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				kinds.MergeRecord(c.path, c.base, c.ours, c.theirs)
			}
		})
	}
}

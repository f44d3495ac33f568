package builtin_test

// Regressions: each test is a counterexample a review found in the first
// version of the claim merge and of record validation; its comment tells
// the bug as it was, the test pins the fix.

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/gitcodex/git-codex/tools/lock"
	"github.com/gitcodex/git-codex/tools/work"
)

// TestRegressionMergeClaimBothKeptIsSymmetric: when both sides keep the base's
// claim (same holder, clock and instant), mergeClaim returns "ours" (case
// co.same(cb) → ct, and ct is the base's claim too), and mergeExclusive
// writes it as an override. Two encodings of one instant ("Z" and "+02:00")
// are Claim.same but marshal differently, so the merged bytes depend on
// which side is ours.
func TestRegressionMergeClaimBothKeptIsSymmetric(t *testing.T) {
	p := "locks/a/b/0123456789abcdef00ab.json"
	base := []byte(`{"name":"db","claim":{"holder":"w1","clock":2,"at":"2026-03-01T10:00:00Z"},"reason":"r0","updated_at":"2026-03-01T10:00:00Z","updated_by":"w1","clock":2}`)
	// w1 renews on both machines; one machine's record keeps the claim's
	// time in a +02:00 zone (a valid RFC 3339 time ValidateRecord accepts).
	ours := []byte(`{"name":"db","claim":{"holder":"w1","clock":2,"at":"2026-03-01T10:00:00Z"},"reason":"r1","updated_at":"2026-03-01T10:05:00Z","updated_by":"w1","clock":6}`)
	theirs := []byte(`{"name":"db","claim":{"holder":"w1","clock":2,"at":"2026-03-01T12:00:00+02:00"},"reason":"r2","updated_at":"2026-03-01T10:06:00Z","updated_by":"w1","clock":7}`)
	for _, r := range [][]byte{ours, theirs} {
		if err := builtin.Registry().Kinds().ValidateRecord(p, r); err != nil && !strings.Contains(err.Error(), "belong") {
			t.Fatalf("setup: %v", err)
		}
	}
	x := builtin.Registry().Kinds().MergeRecord(p, base, ours, theirs)
	y := builtin.Registry().Kinds().MergeRecord(p, base, theirs, ours)
	if !bytes.Equal(x, y) {
		t.Errorf("MergeRecord is not symmetric when both sides keep the base's claim:\n ours,theirs -> %s\n theirs,ours -> %s", x, y)
	}
}

// TestRegressionConfigTieIsSymmetric (pre-existing, in mergeConfig): two
// entries equal in clock, set_by and value whose set_at are one instant in
// two zones: newerEntry falls through to "return a".
func TestRegressionConfigTieIsSymmetric(t *testing.T) {
	a := []byte(`{"entries":{"k":{"value":1,"set_by":"h","set_at":"2026-03-01T10:00:00Z","clock":3}}}`)
	b := []byte(`{"entries":{"k":{"value":1,"set_by":"h","set_at":"2026-03-01T12:00:00+02:00","clock":3}}}`)
	x := builtin.Registry().Kinds().MergeRecord("config/config.json", nil, a, b)
	y := builtin.Registry().Kinds().MergeRecord("config/config.json", nil, b, a)
	if !bytes.Equal(x, y) {
		t.Errorf("config merge is not symmetric:\n%s\n%s", x, y)
	}
}

// TestRegressionTaskStateFollowsItsClaim: mergeExclusive decides the claim
// (mergeClaim) and the state (field merge, newer wins) independently, so a
// merged task can be REVIEW with nobody holding it (then only CANCELLED is
// reachable: task_update_status refuses anything else on an unheld task,
// task_claim needs PENDING, task_release needs a holder), or PENDING while
// held.
func TestRegressionTaskStateFollowsItsClaim(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 3, 1, 0, 0, s, 0, time.UTC) }
	task := func(state, holder string, claimClock gitstate.Clock, clock gitstate.Clock, by string) []byte {
		tk := work.Task{ID: "t-0123456789abcdef", Title: "x", State: state, CreatedBy: "boss",
			UpdatedAt: at(int(clock)), UpdatedBy: by, Clock: clock}
		if holder != "" {
			tk.Claim = &tools.Claim{Holder: holder, Clock: claimClock, At: at(int(claimClock))}
		}
		return mustJSON(t, tk)
	}
	p := "tasks/e/f/t-0123456789abcdef.json"
	cases := []struct {
		name               string
		base, ours, theirs []byte
	}{
		{"released on one machine, submitted on the other",
			task(work.TaskInProgress, "w1", 2, 2, "w1"),
			task(work.TaskPending, "", 0, 5, "human:boss@x.org"), // force-released
			task(work.TaskReview, "w1", 2, 6, "w1")},             // w1 submits
		{"released on one machine, released and re-claimed on the other",
			task(work.TaskReview, "w1", 2, 2, "w1"),
			task(work.TaskPending, "", 0, 9, "w1"),
			task(work.TaskInProgress, "w2", 6, 6, "w2")},
	}
	for _, c := range cases {
		got := both(t, p, c.base, c.ours, c.theirs)
		var tk work.Task
		if err := json.Unmarshal(got, &tk); err != nil {
			t.Fatal(err)
		}
		held := tk.Claim != nil
		if held != (tk.State == work.TaskInProgress || tk.State == work.TaskReview) {
			t.Errorf("%s: merged task is %s with claim %+v: state and holder disagree", c.name, tk.State, tk.Claim)
		}
	}
}

// TestRegressionLockFieldsFollowTheClaim: the same independence for locks.
// w1's lock ran out on one machine and w2 took it with a 60s ttl; on the
// other, w1 renewed it without a ttl (same claim, higher clock). The merge
// keeps w2's claim (the base's claim yields) but w1's reason and w1's "no
// expiry": w2 now holds the lock forever under w1's reason.
func TestRegressionLockFieldsFollowTheClaim(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	exp := func(d time.Duration) *time.Time { e := t0.Add(d); return &e }
	w1 := &tools.Claim{Holder: "w1", Clock: 2, At: t0}
	base := mustJSON(t, lock.Lock{Name: "db", Claim: w1, Reason: "short", ExpiresAt: exp(time.Minute), UpdatedAt: t0, UpdatedBy: "w1", Clock: 2})
	renewed := mustJSON(t, lock.Lock{Name: "db", Claim: w1, Reason: "long job", UpdatedAt: t0.Add(time.Hour), UpdatedBy: "w1", Clock: 5})
	takenOver := mustJSON(t, lock.Lock{Name: "db", Claim: &tools.Claim{Holder: "w2", Clock: 4, At: t0.Add(2 * time.Minute)},
		Reason: "w2's", ExpiresAt: exp(3 * time.Minute), UpdatedAt: t0.Add(2 * time.Minute), UpdatedBy: "w2", Clock: 4})
	var l lock.Lock
	if err := json.Unmarshal(both(t, lockFile("db"), base, renewed, takenOver), &l); err != nil {
		t.Fatal(err)
	}
	if l.Claim == nil || l.Claim.Holder != "w2" {
		t.Fatalf("holder %+v, want w2", l.Claim)
	}
	if l.Reason != "w2's" || l.ExpiresAt == nil {
		t.Errorf("w2 holds the lock with reason %q and expires_at %v: the other holder's, not w2's", l.Reason, l.ExpiresAt)
	}
}

// TestRegressionUnknownPathsUnderExclusiveDirs: MergeRecord treats every path
// under locks/, tasks/ and reviews/active/ as exclusive (prefix match) and
// restoreInvariants mails the loser at mailPath(holder, …), but
// ValidateRecord checks holders only at the exact layouts; any other path
// there (a "newer version's record") only has to be JSON. Such a record
// also breaks lock_list/task_list, which decode everything under the dir.
func TestRegressionUnknownPathsUnderExclusiveDirs(t *testing.T) {
	bad := []byte(`{"name":"x","claim":{"holder":"../../x","clock":9,"at":"2026-03-01T00:00:00Z"},"clock":9}`)
	for _, p := range []string{"locks/x.json", "tasks/x.json", "reviews/active/a/b.json", "tasks/a/b/c/t-0123456789abcdef.json"} {
		if err := builtin.Registry().Kinds().ValidateRecord(p, bad); err == nil {
			t.Errorf("ValidateRecord(%s) accepts a claim whose holder is a path", p)
		}
	}
	for _, p := range []string{"locks/x.json", "tasks/x.json"} {
		if err := builtin.Registry().Kinds().ValidateRecord(p, []byte(`"not an object"`)); err == nil {
			t.Errorf("ValidateRecord(%s) accepts a non-record that lock_list/task_list cannot decode", p)
		}
	}
}

// TestRegressionConflictWithPathHolderBreaksSync: the consequence of the gap
// above. The remote's record at locks/x.json (only checked to be JSON)
// loses a double grant; its holder "../x" becomes a mail path, tx.Put
// refused it, the merge's finisher failed with an internal error, and this
// machine could never sync with that remote again. Now the remote's tree is
// refused before the merge, with a code and the path.
func TestRegressionConflictWithPathHolderBreaksSync(t *testing.T) {
	a, b, _ := twoMachines(t)
	rec := func(holder string, clock gitstate.Clock) json.RawMessage {
		return json.RawMessage(`{"name":"x","claim":{"holder":"` + holder + `","clock":` +
			strings.TrimSpace(string(mustJSON(t, clock))) + `,"at":"2026-03-01T00:00:00Z"},"clock":1}`)
	}
	a.putRecord("locks/x.json", rec("../x", 9)) // the remote's: passes ValidateRecord
	b.putRecord("locks/x.json", rec("w1", 1))   // earlier claim: wins
	a.sync("origin")
	// The remote's record is not where a lock belongs: sync refuses the
	// remote's state as a whole, naming it, instead of failing half-way.
	tip := b.tip()
	_, err := builtin.Registry().Sync(t.Context(), b.st, tools.Origin{ID: "human:boss@example.org"}, "origin", true, nil)
	if e := tools.AsError(err); err == nil || e.Code != tools.InvalidRemoteState || !strings.Contains(e.Message, "locks/x.json") {
		t.Errorf("B syncs a remote with a lock at locks/x.json: %v; want INVALID_REMOTE_STATE naming it", err)
	}
	if b.tip() != tip {
		t.Error("the refused sync moved B's state")
	}
}

// TestRegressionValidateRefusesTrailingBrace: strictDecode's dec.More() is
// false before a stray '}' or ']', so a record with one passes
// ValidateRecord, yet json.Unmarshal (tx.Get, walkJSON) refuses it: one
// such lock breaks lock_list on every machine that syncs it.
func TestRegressionValidateRefusesTrailingBrace(t *testing.T) {
	l := lock.Lock{Name: "db", UpdatedBy: "w1", Clock: 1}
	rec := append(bytes.TrimSpace(mustJSON(t, l)), '}')
	if json.Unmarshal(rec, new(lock.Lock)) == nil {
		t.Fatal("setup: want a record json.Unmarshal refuses")
	}
	if err := builtin.Registry().Kinds().ValidateRecord(lockFile("db"), rec); err == nil {
		t.Errorf("ValidateRecord accepts %s, which the tools cannot decode", rec)
	}
}

// TestRegressionConflictIDHasOneContent: the conflict id is derived from the
// two claims alone, but the record also holds lost_version, the loser's
// whole record. Two merges of the same claims against different versions
// of the loser's record (w2 renewed its lock between them, keeping its
// claim) write different records under one id; when they meet, the
// add/add merge keeps one and the other lost_version is gone.
func TestRegressionConflictIDHasOneContent(t *testing.T) {
	a, b, _ := twoMachines(t)
	a.ok("w1", "lock_acquire", `{"name":"db","reason":"a"}`)
	b.ok(human, "log_decision", `{"title":"t","body":"b"}`) // B's clock runs ahead: w1 wins
	b.ok("w2", "lock_acquire", `{"name":"db","reason":"first"}`)
	b.sync("origin")                                              // origin has w2's "first" version
	b.ok("w2", "lock_acquire", `{"name":"db","reason":"second"}`) // renew: same claim
	b.git("remote", "add", "a", a.dir)
	if _, err := builtin.Registry().Sync(t.Context(), b.st, tools.Origin{ID: human}, "a", false, nil); err != nil { // B merges A's claim
		t.Fatal(err)
	}
	a.sync("origin") // A merges w2's "first" version
	ca, cb := a.conflicts(), b.conflicts()
	if len(ca) != 1 || len(cb) != 1 {
		t.Fatalf("conflicts: A %d, B %d; want 1 each", len(ca), len(cb))
	}
	if ca[0].ID == cb[0].ID && !bytes.Equal(ca[0].LostVersion, cb[0].LostVersion) {
		t.Errorf("conflict %s has two contents:\n A: %s\n B: %s", ca[0].ID, ca[0].LostVersion, cb[0].LostVersion)
	}
}

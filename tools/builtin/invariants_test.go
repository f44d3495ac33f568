package builtin_test

// The invariants sync restores: a lock granted on two machines while they
// were apart ends with one holder, the earlier claim; the loser finds a
// conflict record and a mail; both machines end with the same tree.

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/gitcodex/git-codex/tools/lock"
	"github.com/gitcodex/git-codex/tools/review"
	"github.com/gitcodex/git-codex/tools/work"
)

// twoMachines makes clones A and B of one remote with agents w1 and w2
// registered on both, synced.
func twoMachines(t *testing.T) (a, b *clone, remote string) {
	t.Helper()
	remote = newBareRemote(t)
	a, b = newClone(t, "A", remote), newClone(t, "B", remote)
	a.init()
	a.ok(human, "agent_register", `{"id":"w1","type":"worker"}`)
	a.ok(human, "agent_register", `{"id":"w2","type":"worker"}`)
	a.sync("origin")
	b.sync("origin")
	return a, b, remote
}

func (c *clone) conflicts() []tools.Conflict {
	c.t.Helper()
	d, _ := c.ok(human, "conflict_list", `{}`)
	b, _ := json.Marshal(d["conflicts"])
	var out []tools.Conflict
	if err := json.Unmarshal(b, &out); err != nil {
		c.t.Fatal(err)
	}
	return out
}

func (c *clone) lockHolder(name string) string {
	c.t.Helper()
	d, _ := c.ok(human, "lock_list", `{}`)
	for _, l := range d["locks"].([]any) {
		l := l.(map[string]any)
		if l["name"] == name {
			return l["claim"].(map[string]any)["holder"].(string)
		}
	}
	return ""
}

func TestSyncSettlesALockTakenOnBothMachines(t *testing.T) {
	a, b, _ := twoMachines(t)
	// w1 takes the lock on A first (lower clock: A has made fewer commits
	// since the last sync), then w2 on B.
	a.ok("w1", "lock_acquire", `{"name":"db-migrations","reason":"adding users table"}`)
	b.ok(human, "log_decision", `{"title":"t","body":"b"}`) // B's clock runs ahead
	b.ok("w2", "lock_acquire", `{"name":"db-migrations","reason":"adding orders table"}`)
	// B's own view: w2 holds it, and w1 is refused there.
	if r := b.call("w1", "lock_acquire", `{"name":"db-migrations"}`); r.OK || r.Error.Code != tools.LockDenied {
		t.Fatalf("second acquire on B: %+v, want LOCK_DENIED", r)
	}

	a.sync("origin")
	res := b.sync("origin") // merges A's claim into B's
	if res.Merge.Status != gitstate.MergeMerged {
		t.Fatalf("B's sync: %+v, want a merge", res.Merge)
	}
	a.sync("origin")
	sameTrees(t, a, b)

	for _, c := range []*clone{a, b} {
		if h := c.lockHolder("db-migrations"); h != "w1" {
			t.Errorf("%s: lock held by %q, want w1 (the earlier claim)", c.name, h)
		}
		cs := c.conflicts()
		if len(cs) != 1 {
			t.Fatalf("%s: %d conflicts, want 1: %+v", c.name, len(cs), cs)
		}
		k := cs[0]
		if k.Kind != "lock" || k.Resource != "db-migrations" || k.Winner.Holder != "w1" || k.Loser.Holder != "w2" {
			t.Errorf("%s: conflict %+v", c.name, k)
		}
		// the loser's version of the record is kept whole
		var lost lock.Lock
		if err := json.Unmarshal(k.LostVersion, &lost); err != nil || lost.Reason != "adding orders table" || lost.Claim.Holder != "w2" {
			t.Errorf("%s: lost version %s (%v)", c.name, k.LostVersion, err)
		}
		// w2 is told, in its inbox
		inbox, _ := c.ok("w2", "mail_list_inbox", `{}`)
		mails := inbox["mails"].([]any)
		if len(mails) != 1 {
			t.Fatalf("%s: w2 has %d mails, want the conflict's", c.name, len(mails))
		}
		m := mails[0].(map[string]any)
		if m["id"] != k.MailID || m["from"] != "git-codex" || !strings.Contains(m["subject"].(string), "db-migrations") || !strings.Contains(m["body"].(string), "conflict list --loser w2") {
			t.Errorf("%s: mail %v", c.name, m)
		}
	}
	// a reply to git codex itself has nowhere to go
	if r := b.call("w2", "mail_reply", `{"original_mail_id":"`+b.conflicts()[0].MailID+`","body":"ok"}`); r.OK || r.Error.Code != tools.InvalidInput {
		t.Errorf("reply to the conflict mail: %+v, want INVALID_INPUT", r)
	}
	// The merge commit is the event: both parents, a conflict in its summary.
	if subj := b.git("log", "-1", "--format=%s", res.Merge.Commit); !strings.Contains(subj, "1 conflict(s)") {
		t.Errorf("merge commit summary %q", subj)
	}
	if parents := strings.Fields(b.git("log", "-1", "--format=%P", res.Merge.Commit)); len(parents) != 2 {
		t.Errorf("merge commit parents %v", parents)
	}
	// w2 can now take its turn after w1 releases, on either machine.
	a.ok("w1", "lock_release", `{"name":"db-migrations"}`)
	a.ok("w2", "lock_acquire", `{"name":"db-migrations"}`)
}

// TestSyncConflictIsRecordedOnce: both machines merge the same two claims
// (each syncs before seeing the other's merge); the conflict and its mail
// are derived from the claims, so the two merges write the same records,
// and the final state has one conflict, not two.
func TestSyncConflictIsRecordedOnce(t *testing.T) {
	a, b, remote := twoMachines(t)
	a.ok("w1", "lock_acquire", `{"name":"release"}`)
	b.ok("w2", "lock_acquire", `{"name":"release"}`)
	// A pushes; B merges A's claim locally. A, meanwhile, merges B's claim
	// through a second remote pointing at B itself.
	a.sync("origin")
	b.sync("origin")
	a.git("remote", "add", "b", b.dir)
	if _, err := builtin.Registry().Sync(t.Context(), a.st, tools.Origin{ID: human}, "b", false, nil); err != nil {
		t.Fatal(err)
	}
	if ta, tb := a.tree(), b.tree(); ta != tb {
		t.Errorf("A and B merged the same claims into different trees: %s %s", ta, tb)
	}
	a.sync("origin")
	b.sync("origin")
	sameTrees(t, a, b)
	if n := len(a.conflicts()); n != 1 {
		t.Errorf("%d conflicts after both merged the same claims, want 1", n)
	}
	_ = remote
}

// TestMergeRecordClaims: the claim rules, record by record.
func TestMergeRecordClaims(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 3, 1, 0, 0, s, 0, time.UTC) }
	lockRec := func(holder string, clock gitstate.Clock, sec int, reason string) []byte {
		l := lock.Lock{Name: "db", Reason: reason, UpdatedAt: at(sec), UpdatedBy: holder, Clock: clock}
		if holder != "" {
			l.Claim = &tools.Claim{Holder: holder, Clock: clock, At: at(sec)}
		}
		return mustJSON(t, l)
	}
	holder := func(rec []byte) string {
		var l lock.Lock
		if err := json.Unmarshal(rec, &l); err != nil {
			t.Fatal(err)
		}
		if l.Claim == nil {
			return ""
		}
		return l.Claim.Holder
	}
	p := "locks/a/b/0123456789abcdef00ab.json"
	free := lockRec("", 1, 0, "")
	renewed := func(rec []byte, clock gitstate.Clock) []byte { // the holder took it again: same claim, new reason
		var l lock.Lock
		json.Unmarshal(rec, &l)
		l.Reason, l.Clock = "renewed", clock
		return mustJSON(t, l)
	}
	cases := []struct {
		name               string
		base, ours, theirs []byte
		want               string
	}{
		{"both claimed: lower clock wins", free, lockRec("w1", 5, 9, ""), lockRec("w2", 7, 1, ""), "w1"},
		{"same clock: earlier time wins", free, lockRec("w2", 5, 1, ""), lockRec("w1", 5, 2, ""), "w2"},
		{"same clock and time: smaller holder", free, lockRec("w2", 5, 1, ""), lockRec("w1", 5, 1, ""), "w1"},
		{"created on both sides, no base", nil, lockRec("w2", 9, 1, ""), lockRec("w1", 4, 1, ""), "w1"},
		{"a claim beats a concurrent release", lockRec("w0", 2, 0, ""), lockRec("", 9, 5, ""), lockRec("w1", 4, 1, ""), "w1"},
		{"released and claimed again beats untouched", lockRec("w0", 2, 0, ""), renewed(lockRec("w0", 2, 0, ""), 7), lockRec("w1", 4, 1, ""), "w1"},
		{"the same holder on both sides", free, lockRec("w1", 5, 1, "a"), lockRec("w1", 6, 2, "b"), "w1"},
		{"released on both sides", lockRec("w0", 2, 0, ""), lockRec("", 5, 1, ""), lockRec("", 6, 2, ""), ""},
		{"released on one side, untouched on the other", lockRec("w0", 2, 0, ""), lockRec("", 5, 1, ""), renewed(lockRec("w0", 2, 0, ""), 6), ""},
		{"no base: a claim beats a later taken-and-released record", nil, lockRec("w1", 3, 1, ""), lockRec("", 9, 2, ""), "w1"},
	}
	for _, c := range cases {
		got := both(t, p, c.base, c.ours, c.theirs)
		if h := holder(got); h != c.want {
			t.Errorf("%s: holder %q, want %q\n%s", c.name, h, c.want, got)
		}
		if c.want != "" && !bytes.Equal(got, c.ours) && !bytes.Equal(got, c.theirs) && strings.HasPrefix(c.name, "both") {
			t.Errorf("%s: a conflict takes the winner's record whole, got %s", c.name, got)
		}
	}
}

// putRecord writes one record straight into a clone's state, as a tool
// that does not exist yet (request_review) will.
func (c *clone) putRecord(path string, v any) {
	c.t.Helper()
	_, err := c.st.Update(context.Background(), func(tx *gitstate.Tx) error {
		tx.SetMeta(gitstate.Meta{Summary: "test: put " + path, Trailers: []gitstate.Trailer{{Key: gitstate.TrailerTool, Value: "test"}}})
		return tx.Put(path, v)
	})
	if err != nil {
		c.t.Fatal(err)
	}
}

// TestSyncKeepsOneActiveReviewPerCoder: two machines each start a review
// of coder c1 (the record request_review claims); after sync one reviewer
// holds it, the other is mailed, and the conflict is recorded.
func TestSyncKeepsOneActiveReviewPerCoder(t *testing.T) {
	a, b, _ := twoMachines(t)
	a.ok(human, "agent_register", `{"id":"c1","type":"coding"}`)
	a.ok(human, "agent_register", `{"id":"r1","type":"review"}`)
	a.ok(human, "agent_register", `{"id":"r2","type":"review"}`)
	a.sync("origin")
	b.sync("origin")
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	activeReview := func(reviewer string, clock gitstate.Clock, sec int) review.ActiveReview {
		when := at.Add(time.Duration(sec) * time.Second)
		return review.ActiveReview{Coder: "c1", Review: "rev-" + reviewer, Claim: &tools.Claim{Holder: reviewer, Clock: clock, At: when},
			UpdatedAt: when, UpdatedBy: "c1", Clock: clock}
	}
	a.putRecord("reviews/active/c1.json", activeReview("r2", 40, 5))
	b.putRecord("reviews/active/c1.json", activeReview("r1", 40, 3)) // same clock, earlier: wins
	a.sync("origin")
	b.sync("origin")
	a.sync("origin")
	sameTrees(t, a, b)
	var got review.ActiveReview
	if err := json.Unmarshal([]byte(a.git("show", gitstate.RefState+":reviews/active/c1.json")), &got); err != nil {
		t.Fatal(err)
	}
	if got.Claim == nil || got.Claim.Holder != "r1" || got.Review != "rev-r1" {
		t.Errorf("active review of c1: %+v, want r1's", got)
	}
	cs := a.conflicts()
	if len(cs) != 1 || cs[0].Kind != "review" || cs[0].Resource != "c1" || cs[0].Loser.Holder != "r2" {
		t.Fatalf("conflicts %+v", cs)
	}
	inbox, _ := a.ok("r2", "mail_list_inbox", `{}`)
	if inbox["count"].(float64) != 1 {
		t.Errorf("r2's inbox: %v", inbox)
	}
}

// TestSyncKeepsAnEndedTaskEnded: the supervisor cancels a task on A while
// w2 claims it on B. The cancellation wins (a task ended is ended), and w2
// is told its claim is gone, with the rule "ended".
func TestSyncKeepsAnEndedTaskEnded(t *testing.T) {
	a, b, _ := twoMachines(t)
	d, _ := a.ok(human, "task_create", `{"title":"Drop the old API","description":"after 2.0"}`)
	id := d["id"].(string)
	a.sync("origin")
	b.sync("origin")
	a.ok(human, "task_update_status", `{"id":"`+id+`","state":"CANCELLED"}`)
	b.ok("w2", "task_claim", `{"id":"`+id+`"}`)
	b.ok("w2", "task_update_status", `{"id":"`+id+`","state":"REVIEW"}`)
	a.sync("origin")
	res := b.sync("origin")
	a.sync("origin")
	sameTrees(t, a, b)
	if len(res.Conflicts) != 1 || res.Conflicts[0].Rule != tools.RuleEnded || res.Conflicts[0].Loser.Holder != "w2" || res.Conflicts[0].Winner != nil {
		t.Fatalf("conflicts %+v", res.Conflicts)
	}
	task, _ := a.ok(human, "task_show", `{"id":"`+id+`"}`)
	if task["state"] != work.TaskCancelled || task["claim"] != nil {
		t.Errorf("task after sync: %v, want CANCELLED and unclaimed", task)
	}
	inbox, _ := a.ok("w2", "mail_list_inbox", `{}`)
	mails := inbox["mails"].([]any)
	if len(mails) != 1 || !strings.Contains(mails[0].(map[string]any)["subject"].(string), "was CANCELLED on another machine") {
		t.Errorf("w2's inbox: %v", mails)
	}
	var lost work.Task
	if err := json.Unmarshal(res.Conflicts[0].LostVersion, &lost); err != nil || lost.State != work.TaskReview {
		t.Errorf("lost version %s", res.Conflicts[0].LostVersion)
	}
}

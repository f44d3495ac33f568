package builtin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
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

// envSyncSeed reruns TestSyncProperty with a given seed:
//
//	CODEX_SYNC_SEED=1234 go test ./tools -run TestSyncProperty -v
const envSyncSeed = "CODEX_SYNC_SEED"

// TestSyncProperty: random operations on two or three clones of one bare
// remote, synced (and pulled) in random orders. After every clone syncs in
// turn twice:
//
//   - all clones have the identical state tree;
//   - every mail, decision and agent created on any clone is there;
//   - a mail is read if and only if its recipient read it on some clone;
//   - every config key set on any clone is set;
//   - no lock, task or review claim is lost silently: each granted claim
//     still holds, was released by its holder afterwards, or lost a
//     conflict that is recorded, with a mail to the loser.
func TestSyncProperty(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(envSyncSeed); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", envSyncSeed, s, err)
		}
		seed = n
	}
	runs, steps := 3, 100
	if testing.Short() {
		runs, steps = 1, 30
	}
	for run := 0; run < runs; run++ {
		s := seed + uint64(run)
		t.Run(fmt.Sprintf("seed=%d", s), func(t *testing.T) {
			t.Logf("rerun with %s=%d", envSyncSeed, s)
			syncProperty(t, s, steps)
		})
	}
}

// syncModel is what the clones, together, must end up holding.
type syncModel struct {
	mails     map[string]string // mail id -> recipient
	read      map[string]bool   // mail ids read on some clone
	decisions map[string]bool
	agents    map[string]bool
	config    map[string]bool // keys set
	claims    []claimEvent    // lock grants, in the order they happened
}

// claimEvent is a lock or task granted (or, with released, freed by its
// holder) on some clone at some step.
type claimEvent struct {
	step     int
	kind     string // "lock" or "task"
	resource string // lock name or task id
	holder   string
	released bool
}

func syncProperty(t *testing.T, seed uint64, steps int) {
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	remote := newBareRemote(t)
	n := 2 + r.IntN(2)
	clones := make([]*clone, n)
	for i := range clones {
		clones[i] = newClone(t, fmt.Sprintf("C%d", i), remote)
	}
	m := &syncModel{mails: map[string]string{}, read: map[string]bool{}, decisions: map[string]bool{},
		agents: map[string]bool{}, config: map[string]bool{}}
	first := clones[0]
	first.init()
	for _, id := range []string{"ann", "ben", "cat"} {
		first.ok(human, "agent_register", fmt.Sprintf(`{"id":%q,"type":"worker"}`, id))
		m.agents[id] = true
	}
	for _, c := range clones {
		c.sync("origin")
	}
	agentIDs := []string{"ann", "ben", "cat"}
	var trace []string
	defer func() {
		if t.Failed() {
			t.Logf("operations:\n%s", strings.Join(trace, "\n"))
		}
	}()
	for step := 0; step < steps; step++ {
		ci := r.IntN(n)
		c := clones[ci]
		op := r.IntN(100)
		switch {
		case op < 15: // mail_send
			from, to := agentIDs[r.IntN(len(agentIDs))], agentIDs[r.IntN(len(agentIDs))]
			data, _ := c.ok(from, "mail_send", fmt.Sprintf(`{"to":%q,"subject":"s%d","body":"b"}`, to, step))
			id := data["mail_id"].(string)
			m.mails[id] = to
			trace = append(trace, fmt.Sprintf("%s: %s mails %s: %s", c.name, from, to, id))
		case op < 22: // mail_read of a mail this clone has
			id, to, ok := randomMail(t, c, r)
			if !ok {
				continue
			}
			c.ok(to, "mail_read", fmt.Sprintf(`{"mail_id":%q}`, id))
			m.read[id] = true
			trace = append(trace, fmt.Sprintf("%s: %s reads %s", c.name, to, id))
		case op < 27: // log_decision
			data, _ := c.ok(agentIDs[r.IntN(len(agentIDs))], "log_decision", fmt.Sprintf(`{"title":"d%d","body":"why"}`, step))
			id := data["log_id"].(string)
			m.decisions[id] = true
			trace = append(trace, fmt.Sprintf("%s: decision %s", c.name, id))
		case op < 31: // config_set
			key := []string{"mail.max_body_bytes", "mail.max_subject_bytes"}[r.IntN(2)]
			c.ok(human, "config_set", fmt.Sprintf(`{"key":%q,"value":"%d"}`, key, 1000+r.IntN(9000)))
			m.config[key] = true
			trace = append(trace, fmt.Sprintf("%s: config %s", c.name, key))
		case op < 35: // agent_register: usually new, sometimes an id another clone may also register
			id := fmt.Sprintf("%s-a%d", strings.ToLower(c.name), step)
			if r.IntN(3) == 0 {
				id = fmt.Sprintf("shared-%d", r.IntN(3))
			}
			res := c.call(human, "agent_register", fmt.Sprintf(`{"id":%q,"type":"coding"}`, id))
			if !res.OK && res.Error.Code != tools.AlreadyExists {
				t.Fatalf("%s: agent_register %s: %+v", c.name, id, res.Error)
			}
			m.agents[id] = true
			trace = append(trace, fmt.Sprintf("%s: register %s (%v)", c.name, id, res.OK))
		case op < 45: // lock_acquire: few names, so machines grant the same lock
			name, who := fmt.Sprintf("l%d", r.IntN(3)), agentIDs[r.IntN(len(agentIDs))]
			res := c.call(who, "lock_acquire", fmt.Sprintf(`{"name":%q}`, name))
			if !res.OK && res.Error.Code != tools.LockDenied {
				t.Fatalf("%s: lock_acquire: %+v", c.name, res.Error)
			}
			// a holder taking its own lock again renews it: no new claim
			if l, _ := res.Data.(lock.LockAcquired); res.OK && l.Claim.Clock == l.Clock {
				m.claims = append(m.claims, claimEvent{step: step, kind: "lock", resource: name, holder: who})
			}
			trace = append(trace, fmt.Sprintf("%s: %s acquires %s (%v)", c.name, who, name, res.OK))
		case op < 50: // lock_release by whoever holds it here
			name, who := fmt.Sprintf("l%d", r.IntN(3)), agentIDs[r.IntN(len(agentIDs))]
			res := c.call(who, "lock_release", fmt.Sprintf(`{"name":%q}`, name))
			if res.OK {
				m.claims = append(m.claims, claimEvent{step: step, kind: "lock", resource: name, holder: who, released: true})
			}
			trace = append(trace, fmt.Sprintf("%s: %s releases %s (%v)", c.name, who, name, res.OK))
		case op < 54: // task_create
			data, _ := c.ok(human, "task_create", fmt.Sprintf(`{"title":"t%d","description":"do it"}`, step))
			trace = append(trace, fmt.Sprintf("%s: task %s", c.name, data["id"]))
		case op < 60: // task_claim of a task this clone has
			id, ok := randomTask(t, c, r)
			if !ok {
				continue
			}
			who := agentIDs[r.IntN(len(agentIDs))]
			res := c.call(who, "task_claim", fmt.Sprintf(`{"id":%q}`, id))
			if !res.OK && res.Error.Code != tools.AlreadyClaimed {
				t.Fatalf("%s: task_claim: %+v", c.name, res.Error)
			}
			// claiming a task you hold changes nothing: only a claim made by this call counts
			if tk, _ := res.Data.(work.Task); res.OK && fmt.Sprint(tk.Claim.Clock) == c.git("log", "-1", "--format=%(trailers:key=Codex-Clock,valueonly)", res.Commit) {
				m.claims = append(m.claims, claimEvent{step: step, kind: "task", resource: id, holder: who})
			}
			trace = append(trace, fmt.Sprintf("%s: %s claims %s (%v)", c.name, who, id, res.OK))
		case op < 63: // task_release by whoever holds it here
			id, ok := randomTask(t, c, r)
			if !ok {
				continue
			}
			who := agentIDs[r.IntN(len(agentIDs))]
			if res := c.call(who, "task_release", fmt.Sprintf(`{"id":%q}`, id)); res.OK {
				m.claims = append(m.claims, claimEvent{step: step, kind: "task", resource: id, holder: who, released: true})
			}
			trace = append(trace, fmt.Sprintf("%s: %s releases %s", c.name, who, id))
		case op < 66: // a review of coder "cat" starts, as request_review will claim it
			who := agentIDs[r.IntN(2)] // ann or ben reviews
			if claimActiveReview(t, c, "cat", who) {
				m.claims = append(m.claims, claimEvent{step: step, kind: "review", resource: "cat", holder: who})
			}
			trace = append(trace, fmt.Sprintf("%s: %s reviews cat", c.name, who))
		case op < 70: // a task ends: cancelled by a person, or completed by whoever holds it here
			id, ok := randomTask(t, c, r)
			if !ok {
				continue
			}
			who, state := human, work.TaskCancelled
			if r.IntN(2) == 0 {
				who, state = agentIDs[r.IntN(len(agentIDs))], work.TaskCompleted
			}
			res := c.call(who, "task_update_status", fmt.Sprintf(`{"id":%q,"state":%q}`, id, state))
			trace = append(trace, fmt.Sprintf("%s: %s sets %s %s (%v)", c.name, who, id, state, res.OK))
		case op < 90: // sync
			res := c.sync("origin")
			trace = append(trace, fmt.Sprintf("%s: sync %s, %d resolved, attempts %d", c.name, res.Merge.Status, len(res.Merge.Report.Resolved), res.Attempts))
		default: // pull: merge without pushing
			res, err := builtin.Registry().Sync(context.Background(), c.st, tools.Origin{ID: human}, "origin", false, nil)
			if err != nil {
				t.Fatalf("%s: pull: %v", c.name, err)
			}
			trace = append(trace, fmt.Sprintf("%s: pull %s", c.name, res.Merge.Status))
		}
	}
	for round := 0; round < 2; round++ {
		for _, c := range clones {
			c.sync("origin")
		}
	}
	sameTrees(t, clones...)
	for _, c := range clones {
		recs := c.records()
		for id, to := range m.mails {
			if !recs[mailRecord(to, id)] {
				t.Errorf("%s lost mail %s", c.name, id)
				continue
			}
			if got := c.mail(to, id).IsRead; got != m.read[id] {
				t.Errorf("%s: mail %s is_read = %v, want %v", c.name, id, got, m.read[id])
			}
		}
		for id := range m.decisions {
			if !recs[decisionRecord(id)] {
				t.Errorf("%s lost decision %s", c.name, id)
			}
		}
		for id := range m.agents {
			if !recs["agents/"+id+".json"] {
				t.Errorf("%s lost agent %s", c.name, id)
			}
		}
		var cfg tools.Config
		if err := json.Unmarshal([]byte(c.git("show", gitstate.RefState+":config/config.json")), &cfg); err != nil {
			t.Fatal(err)
		}
		for k := range m.config {
			if _, ok := cfg.Entries[k]; !ok {
				t.Errorf("%s lost config key %s", c.name, k)
			}
		}
	}
	conflicts := checkClaims(t, clones[0], m.claims)
	t.Logf("%d clones, %d steps: %d mails (%d read), %d decisions, %d agents, %d claim events, %d conflicts",
		n, steps, len(m.mails), len(m.read), len(m.decisions), len(m.agents), len(m.claims), conflicts)
}

// randomMail picks one mail in c's current state.
func randomMail(t *testing.T, c *clone, r *rand.Rand) (id, to string, ok bool) {
	t.Helper()
	var ids []string
	recipients := map[string]string{}
	err := c.st.View(context.Background(), func(sn *gitstate.Snapshot) error {
		return sn.Walk("mail", func(p string, _ []byte) error {
			parts := strings.Split(p, "/")
			id := strings.TrimSuffix(parts[len(parts)-1], ".json")
			ids = append(ids, id)
			recipients[id] = parts[1]
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) == 0 {
		return "", "", false
	}
	sort.Strings(ids)
	id = ids[r.IntN(len(ids))]
	return id, recipients[id], true
}

// checkClaims checks that every lock and task granted is accounted for in
// c's final state: its holder holds it, released it later, or lost a
// recorded conflict over it whose mail is in the holder's inbox.
func checkClaims(t *testing.T, c *clone, events []claimEvent) int {
	t.Helper()
	lost := map[[3]string]bool{}
	conflicts := c.conflicts()
	for _, k := range conflicts {
		lost[[3]string{k.Kind, k.Resource, k.Loser.Holder}] = true
		if !c.records()[mailRecord(k.Loser.Holder, k.MailID)] {
			t.Errorf("conflict %s: no mail %s to the loser %s", k.ID, k.MailID, k.Loser.Holder)
		}
		if k.Rule == tools.RuleEarlierClaim && (k.Winner == nil || k.Winner.Holder == k.Loser.Holder || k.Winner.Clock > k.Loser.Clock) {
			t.Errorf("conflict %s: winner %+v is not the earlier claim than %+v", k.ID, k.Winner, k.Loser)
		}
	}
	holder := func(e claimEvent) string {
		switch e.kind {
		case "lock":
			return c.lockHolder(e.resource)
		case "review":
			var r review.ActiveReview
			json.Unmarshal([]byte(c.git("show", gitstate.RefState+":reviews/active/"+e.resource+".json")), &r)
			if r.Claim == nil {
				return ""
			}
			return r.Claim.Holder
		}
		d, _ := c.ok(human, "task_show", fmt.Sprintf(`{"id":%q}`, e.resource))
		if claim, ok := d["claim"].(map[string]any); ok {
			return claim["holder"].(string)
		}
		return ""
	}
	for i, e := range events {
		if e.released {
			continue
		}
		releasedLater := false
		for _, f := range events[i+1:] {
			if f.released && f.kind == e.kind && f.resource == e.resource && f.holder == e.holder {
				releasedLater = true
				break
			}
		}
		if h := holder(e); h != e.holder && !releasedLater && !lost[[3]string{e.kind, e.resource, e.holder}] {
			t.Errorf("step %d: %s's claim on %s %s vanished: not held (holder %q), not released, no conflict recorded",
				e.step, e.holder, e.kind, e.resource, h)
		}
	}
	return len(conflicts)
}

// randomTask picks one task in c's current state.
func randomTask(t *testing.T, c *clone, r *rand.Rand) (string, bool) {
	t.Helper()
	var ids []string
	err := c.st.View(context.Background(), func(sn *gitstate.Snapshot) error {
		return sn.Walk("tasks", func(p string, _ []byte) error {
			ids = append(ids, strings.TrimSuffix(p[strings.LastIndex(p, "/")+1:], ".json"))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) == 0 {
		return "", false
	}
	sort.Strings(ids)
	return ids[r.IntN(len(ids))], true
}

// claimActiveReview claims coder's active review for reviewer in c, if it
// is free there, the way the review loop will: one transaction that reads
// the record and writes the claim. It reports whether a new claim was made.
func claimActiveReview(t *testing.T, c *clone, coder, reviewer string) bool {
	t.Helper()
	path := "reviews/active/" + coder + ".json"
	claimed := false
	_, err := c.st.Update(context.Background(), func(tx *gitstate.Tx) error {
		tx.SetMeta(gitstate.Meta{Summary: "test: " + reviewer + " reviews " + coder, Trailers: []gitstate.Trailer{{Key: gitstate.TrailerTool, Value: "request_review"}}})
		var r review.ActiveReview
		if err := tx.Get(path, &r); err != nil && !errors.Is(err, gitstate.ErrNotFound) {
			return err
		}
		if r.Claim != nil {
			return nil // held (by anyone): no new claim
		}
		now := tx.Now()
		r = review.ActiveReview{Coder: coder, Review: "rev-" + reviewer, Claim: &tools.Claim{Holder: reviewer, Clock: tx.Clock(), At: now},
			UpdatedAt: now, UpdatedBy: reviewer, Clock: tx.Clock()}
		claimed = true
		return tx.Put(path, r)
	})
	if err != nil {
		t.Fatal(err)
	}
	return claimed
}

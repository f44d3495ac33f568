package builtin_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/gitcodex/git-codex/tools/decision"
	"github.com/gitcodex/git-codex/tools/mail"
)

const configPath = "config/config.json"

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// both runs MergeRecord in both directions, checks they agree, and returns
// the result.
func both(t *testing.T, path string, base, ours, theirs []byte) []byte {
	t.Helper()
	a := builtin.Registry().Kinds().MergeRecord(path, base, ours, theirs)
	b := builtin.Registry().Kinds().MergeRecord(path, base, theirs, ours)
	if !bytes.Equal(a, b) {
		t.Fatalf("MergeRecord(%s) is not symmetric:\n ours,theirs -> %s\n theirs,ours -> %s", path, a, b)
	}
	return a
}

func mailAt(clock gitstate.Clock, read bool) mail.Mail {
	m := mail.Mail{ID: "m-01", From: "alice", To: "bob", Subject: "s", Body: "b",
		CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Clock: 3}
	if read {
		at := m.CreatedAt.Add(time.Minute)
		m.IsRead, m.ReadAt, m.Clock = true, &at, clock
	}
	return m
}

func TestMergeRecordDeletionKeepsTheChange(t *testing.T) {
	base := mustJSON(t, mailAt(3, false))
	changed := mustJSON(t, mailAt(7, true))
	p := "mail/bob/0/1/m-01.json"
	if got := builtin.Registry().Kinds().MergeRecord(p, base, nil, changed); !bytes.Equal(got, changed) {
		t.Errorf("deleted ours, changed theirs: %s", got)
	}
	if got := builtin.Registry().Kinds().MergeRecord(p, base, changed, nil); !bytes.Equal(got, changed) {
		t.Errorf("changed ours, deleted theirs: %s", got)
	}
	cfg := mustJSON(t, tools.Config{Entries: map[string]tools.ConfigEntry{"mail.max_body_bytes": {Value: json.RawMessage("10"), Clock: 4}}})
	if got := both(t, configPath, cfg, nil, cfg); !bytes.Equal(got, cfg) {
		t.Errorf("config deleted on one side: %s", got)
	}
}

// TestMergeRecordHigherClockWins: mutable records (mail read flags,
// agents) are taken whole from the side with the higher clock.
func TestMergeRecordHigherClockWins(t *testing.T) {
	base := mustJSON(t, mailAt(3, false))
	read5, read9 := mustJSON(t, mailAt(5, true)), mustJSON(t, mailAt(9, true))
	if got := both(t, "mail/bob/0/1/m-01.json", base, read5, read9); !bytes.Equal(got, read9) {
		t.Errorf("got %s, want the clock-9 version", got)
	}
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	older := tools.Agent{ID: "alice", Type: tools.TypeWorker, State: "idle", CreatedBy: "human:x", CreatedAt: now, UpdatedAt: now, Clock: 12}
	newer := older
	later := now.Add(time.Hour)
	newer.LastActiveAt, newer.UpdatedAt, newer.Clock = &later, later, 40
	// the older one has the larger encoding ("worker" -> "zzz"), the clock
	// still decides
	older.State = "zzz"
	if got := both(t, "agents/alice.json", nil, mustJSON(t, older), mustJSON(t, newer)); !bytes.Equal(got, mustJSON(t, newer)) {
		t.Errorf("agent: got %s, want the clock-40 version", got)
	}
}

// TestMergeRecordTiesAreDeterministic: equal clocks (two machines at the
// same Lamport time, or an immutable record whose id collided) go to the
// larger encoding, whichever side it is on.
func TestMergeRecordTiesAreDeterministic(t *testing.T) {
	d1 := mustJSON(t, decision.Decision{ID: "d-1", Title: "use git", Body: "a", Actor: "alice", Clock: 8})
	d2 := mustJSON(t, decision.Decision{ID: "d-1", Title: "use git", Body: "b", Actor: "alice", Clock: 8})
	got := both(t, "decisions/01/d-1.json", nil, d1, d2)
	if !bytes.Equal(got, d2) {
		t.Errorf("tie: got %s, want the larger encoding %s", got, d2)
	}
	// records without a clock (or not JSON) tie at 0
	if got := both(t, "misc/x", nil, []byte("abc"), []byte("abd")); string(got) != "abd" {
		t.Errorf("clockless tie: %s", got)
	}
}

func cfgEntry(value string, clock gitstate.Clock, by string, at int) tools.ConfigEntry {
	return tools.ConfigEntry{Value: json.RawMessage(value), Clock: clock, SetBy: by,
		SetAt: time.Date(2026, 1, 1, 0, 0, at, 0, time.UTC)}
}

func decodeConfig(t *testing.T, b []byte) tools.Config {
	t.Helper()
	var c tools.Config
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("merged config is not a config: %v\n%s", err, b)
	}
	return c
}

// TestMergeRecordConfigKeyByKey: the config record merges per key, each key
// to its newer entry, so two machines setting different keys keep both.
func TestMergeRecordConfigKeyByKey(t *testing.T) {
	base := tools.Config{Entries: map[string]tools.ConfigEntry{
		"mail.max_body_bytes": cfgEntry("100", 2, "human:a", 0),
	}}
	ours := tools.Config{Entries: map[string]tools.ConfigEntry{
		"mail.max_body_bytes":    cfgEntry("100", 2, "human:a", 0),
		"mail.max_subject_bytes": cfgEntry("50", 5, "human:a", 1),     // only ours set it
		"policy.worker.allow":    cfgEntry(`["mail.*"]`, 9, "bob", 2), // both set it, ours later
		"policy.worker.deny":     cfgEntry(`["a"]`, 6, "alice", 3),    // same clock: larger set_by wins
		"policy.coding.allow":    cfgEntry(`["x"]`, 6, "alice", 4),    // same clock and set_by: larger value
	}}
	theirs := tools.Config{Entries: map[string]tools.ConfigEntry{
		"mail.max_body_bytes":  cfgEntry("200", 3, "human:b", 5), // only theirs changed it
		"policy.worker.allow":  cfgEntry(`["*"]`, 7, "carol", 6),
		"policy.worker.deny":   cfgEntry(`["b"]`, 6, "bob", 7),
		"policy.coding.allow":  cfgEntry(`["y"]`, 6, "alice", 8),
		"policy.review.allow":  cfgEntry(`["r"]`, 4, "human:b", 9), // only theirs set it
		"policy.planning.deny": cfgEntry(`[]`, 1, "human:b", 10),
	}}
	got := decodeConfig(t, both(t, configPath, mustJSON(t, base), mustJSON(t, ours), mustJSON(t, theirs)))
	want := map[string]tools.ConfigEntry{
		"mail.max_body_bytes":    theirs.Entries["mail.max_body_bytes"],
		"mail.max_subject_bytes": ours.Entries["mail.max_subject_bytes"],
		"policy.worker.allow":    ours.Entries["policy.worker.allow"],
		"policy.worker.deny":     theirs.Entries["policy.worker.deny"],
		"policy.coding.allow":    theirs.Entries["policy.coding.allow"],
		"policy.review.allow":    theirs.Entries["policy.review.allow"],
		"policy.planning.deny":   theirs.Entries["policy.planning.deny"],
	}
	if len(got.Entries) != len(want) {
		t.Fatalf("merged keys %v, want %v", keysOf(got.Entries), keysOf(want))
	}
	for k, w := range want {
		g := got.Entries[k]
		if !jsonEqual(g.Value, w.Value) || g.Clock != w.Clock || g.SetBy != w.SetBy || !g.SetAt.Equal(w.SetAt) {
			t.Errorf("%s = %+v (value %s), want %+v (value %s)", k, g, g.Value, w, w.Value)
		}
	}
	// the same key set to the same value by the same caller at the same
	// clock on two machines, at different wall-clock times: still one
	// answer, whichever side merges.
	a := tools.Config{Entries: map[string]tools.ConfigEntry{"mail.max_body_bytes": cfgEntry("100", 4, "human:a", 1)}}
	b := tools.Config{Entries: map[string]tools.ConfigEntry{"mail.max_body_bytes": cfgEntry("100", 4, "human:a", 2)}}
	both(t, configPath, nil, mustJSON(t, a), mustJSON(t, b))
	// a config that is not JSON is merged whole
	if got := both(t, configPath, nil, []byte("{broken"), mustJSON(t, a)); !bytes.Equal(got, []byte("{broken")) && !bytes.Equal(got, mustJSON(t, a)) {
		t.Errorf("broken config: %s", got)
	}
}

func keysOf(m map[string]tools.ConfigEntry) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
}

// TestMergeRecordSymmetricProperty: for random records, configs and
// deletions (small ranges so that clocks, set_by and values tie often),
// MergeRecord(b, x, y) == MergeRecord(b, y, x), a record merge takes each
// field from the side that changed it (checkFieldMerge), and a config merge
// keeps every key either side had, at the higher clock.
func TestMergeRecordSymmetricProperty(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	keys := []string{"mail.max_body_bytes", "mail.max_subject_bytes", "policy.worker.allow", "policy.worker.deny"}
	randConfig := func() []byte {
		c := tools.Config{Entries: map[string]tools.ConfigEntry{}}
		for _, k := range keys {
			if r.IntN(3) == 0 {
				continue
			}
			c.Entries[k] = cfgEntry(fmt.Sprint(r.IntN(3)), gitstate.Clock(r.IntN(4)), []string{"alice", "bob"}[r.IntN(2)], r.IntN(3))
		}
		return mustJSON(t, c)
	}
	randRecord := func() []byte {
		if r.IntN(5) == 0 {
			return nil
		}
		return mustJSON(t, map[string]any{"id": "x", "v": r.IntN(3), "clock": r.IntN(4)})
	}
	for i := 0; i < 3000; i++ {
		if i%2 == 0 {
			base, x, y := randRecord(), randRecord(), randRecord()
			if x == nil && y == nil {
				continue
			}
			got := both(t, "agents/x.json", base, x, y)
			checkFieldMerge(t, base, x, y, got)
			continue
		}
		x, y := randConfig(), randConfig()
		got := decodeConfig(t, both(t, configPath, randConfig(), x, y))
		cx, cy := decodeConfig(t, x), decodeConfig(t, y)
		for _, k := range keys {
			ex, okx := cx.Entries[k]
			ey, oky := cy.Entries[k]
			g, ok := got.Entries[k]
			if ok != (okx || oky) {
				t.Fatalf("key %s: in merge %v, in sides %v %v", k, ok, okx, oky)
			}
			if okx && oky && g.Clock != max(ex.Clock, ey.Clock) {
				t.Fatalf("key %s: clock %d, want max(%d, %d)", k, g.Clock, ex.Clock, ey.Clock)
			}
		}
	}
}

// TestMergeRecordTieGoesToActor: two changes at the same clock are decided
// by who made them (DESIGN §4), whichever side merges.
func TestMergeRecordTieGoesToActor(t *testing.T) {
	a := []byte(`{"id":"w","type":"worker","state":"idle","updated_by":"zed","clock":7,"updated_at":"2026-01-01T00:00:00Z"}`)
	b := []byte(`{"id":"w","type":"worker","state":"busy","updated_by":"amy","clock":7,"updated_at":"2026-01-02T00:00:00Z"}`)
	for _, got := range [][]byte{builtin.Registry().Kinds().MergeRecord("agents/w.json", nil, a, b), builtin.Registry().Kinds().MergeRecord("agents/w.json", nil, b, a)} {
		if string(got) != string(a) {
			t.Errorf("tie went to %s, want the change by the larger actor id (zed)", got)
		}
	}
}

// checkFieldMerge checks one three-way record merge: a deletion yields the
// other side, no base yields one side whole, and otherwise every field has
// the value of the side that changed it, or of either side if both did.
func checkFieldMerge(t *testing.T, base, x, y, got []byte) {
	t.Helper()
	switch {
	case x == nil:
		if !bytes.Equal(got, y) {
			t.Fatalf("deleted on one side: got %s, want %s", got, y)
		}
		return
	case y == nil:
		if !bytes.Equal(got, x) {
			t.Fatalf("deleted on one side: got %s, want %s", got, x)
		}
		return
	case base == nil:
		if !bytes.Equal(got, x) && !bytes.Equal(got, y) {
			t.Fatalf("no base: result %s is neither side", got)
		}
		return
	}
	var b, o, th, g map[string]any
	for _, p := range []struct {
		data []byte
		v    *map[string]any
	}{{base, &b}, {x, &o}, {y, &th}, {got, &g}} {
		if err := json.Unmarshal(p.data, p.v); err != nil {
			t.Fatalf("%s: %v", p.data, err)
		}
	}
	for k := range g {
		if _, ok := o[k]; !ok {
			if _, ok := th[k]; !ok {
				t.Fatalf("field %s in the result is on neither side", k)
			}
		}
	}
	for _, k := range []string{"id", "v", "clock"} {
		want := []any{o[k], th[k]}
		switch {
		case reflect.DeepEqual(o[k], th[k]):
			want = want[:1]
		case reflect.DeepEqual(o[k], b[k]):
			want = want[1:]
		case reflect.DeepEqual(th[k], b[k]):
			want = want[:1]
		}
		if !slices.ContainsFunc(want, func(w any) bool { return reflect.DeepEqual(w, g[k]) }) {
			t.Fatalf("field %s = %v, want one of %v (base %s, sides %s %s)", k, g[k], want, base, x, y)
		}
	}
}

// TestMergeRecordFieldByField: two machines changing different fields of
// one agent both keep their change; a field both changed goes to the
// higher clock.
func TestMergeRecordFieldByField(t *testing.T) {
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	base := tools.Agent{ID: "w", Type: tools.TypeWorker, State: "idle", CreatedBy: "human:x", CreatedAt: now, UpdatedAt: now, UpdatedBy: "human:x", Clock: 3}
	ours, theirs := base, base
	ours.State, ours.UpdatedBy, ours.Clock = "busy", "w", 8
	theirs.Worktree, theirs.Branch, theirs.UpdatedBy, theirs.Clock = "/wt/w", "codex/w", "human:y", 5
	got := both(t, "agents/w.json", mustJSON(t, base), mustJSON(t, ours), mustJSON(t, theirs))
	var a tools.Agent
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatal(err)
	}
	if a.State != "busy" || a.Worktree != "/wt/w" || a.Branch != "codex/w" || a.Clock != 8 || a.UpdatedBy != "w" {
		t.Errorf("merged agent %+v: want state from ours, worktree and branch from theirs, clock and updated_by from the newer (ours)", a)
	}
	// the merged record is encoded like tx.Put's: same field order, indented
	want := base
	want.State, want.Worktree, want.Branch, want.UpdatedBy, want.Clock = "busy", "/wt/w", "codex/w", "w", 8
	if !bytes.Equal(got, mustJSON(t, want)) {
		t.Errorf("encoding:\n%s\nwant\n%s", got, mustJSON(t, want))
	}
}

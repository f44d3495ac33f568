package builtin_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/gitcodex/git-codex/tools/cycle"
)

// roles is a caller whose machine knows every role's PSK ("psk-<role>").
var roles = tools.Origin{ID: human, PSK: func(role string) string { return "psk-" + role }}

// cycleCall calls a tool with roles' origin and returns the result and its
// data as a map.
func cycleCall(t testing.TB, reg *tools.Registry, st *gitstate.Store, tool, args string) (tools.Result, map[string]any) {
	t.Helper()
	r := reg.CallAs(context.Background(), st, roles, tool, json.RawMessage(args))
	b, _ := json.Marshal(r.Data)
	var m map[string]any
	json.Unmarshal(b, &m)
	return r, m
}

func cycleOK(t testing.TB, reg *tools.Registry, st *gitstate.Store, tool, args string) map[string]any {
	t.Helper()
	r, m := cycleCall(t, reg, st, tool, args)
	if !r.OK {
		t.Fatalf("%s %s: %+v", tool, args, r.Error)
	}
	return m
}

func cycleRefused(t testing.TB, reg *tools.Registry, st *gitstate.Store, tool, args string, codes ...tools.Code) tools.Code {
	t.Helper()
	r, _ := cycleCall(t, reg, st, tool, args)
	if r.OK {
		t.Fatalf("%s %s: ok, want %v", tool, args, codes)
	}
	for _, c := range codes {
		if r.Error.Code == c {
			return c
		}
	}
	t.Fatalf("%s %s: %s (%s), want %v", tool, args, r.Error.Code, r.Error.Message, codes)
	return ""
}

// payload is a valid handoff for the cycle.
func payload(cid, feature, producer, consumer, note string) string {
	return fmt.Sprintf(`{"cycle_id":%q,"feature":%q,"producer":%q,"consumer":%q,"files_modified":[],"endpoints":[],"data_shapes":[],"assumptions":[],"todos":[],"notes":[%q]}`,
		cid, feature, producer, consumer, note)
}

func openSession(t testing.TB, reg *tools.Registry, st *gitstate.Store, role string) string {
	t.Helper()
	return cycleOK(t, reg, st, "session_open", fmt.Sprintf(`{"role":%q,"psk":"psk-%s"}`, role, role))["session_token"].(string)
}

func lockToken(t testing.TB, reg *tools.Registry, st *gitstate.Store, session string) string {
	t.Helper()
	return cycleOK(t, reg, st, "lock_acquire", fmt.Sprintf(`{"session_token":%q}`, session))["lock_token"].(string)
}

// TestCycleHandoffRace: many writers hand the same phase over at once with
// the current token, from two sessions of the active role: exactly one
// wins, every other gets INVALID_PHASE (the phase moved on) or LOCK_DENIED.
func TestCycleHandoffRace(t *testing.T) {
	e := newEnv(t)
	g1, g2 := openSession(t, e.reg, e.st, "gemini"), openSession(t, e.reg, e.st, "gemini")
	cid := cycleOK(t, e.reg, e.st, "cycle_start", `{"feature":"race"}`)["cycle_id"].(string)
	lock := lockToken(t, e.reg, e.st, g1)
	var wg sync.WaitGroup
	results := make([]tools.Result, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := []string{g1, g2}[i%2]
			args := fmt.Sprintf(`{"target":"codex","session_token":%q,"lock_token":%q,"payload":%s}`, s, lock, payload(cid, "race", "gemini", "codex", fmt.Sprint(i)))
			results[i] = e.reg.CallAs(context.Background(), e.st, roles, "handoff_write", json.RawMessage(args))
		}()
	}
	wg.Wait()
	won := 0
	for i, r := range results {
		switch {
		case r.OK:
			won++
		case r.Error.Code != tools.InvalidPhase && r.Error.Code != tools.LockDenied:
			t.Errorf("writer %d: %s (%s)", i, r.Error.Code, r.Error.Message)
		}
	}
	if won != 1 {
		t.Fatalf("%d writers won, want 1", won)
	}
	st := cycleOK(t, e.reg, e.st, "cycle_status", `{}`)
	if st["phase"] != "backend" || st["active_role"] != "codex" {
		t.Fatalf("status after the race: %v", st)
	}
	// the lock token died with the handoff: the producer's role can no
	// longer use it, and gets no new one
	cycleRefused(t, e.reg, e.st, "lock_acquire", fmt.Sprintf(`{"session_token":%q}`, g2), tools.LockDenied)
}

// TestCycleTokensStoredHashed: no token a cycle issued is in the state's
// tree or history; only hashes are.
func TestCycleTokensStoredHashed(t *testing.T) {
	e := newEnv(t)
	g := openSession(t, e.reg, e.st, "gemini")
	cycleOK(t, e.reg, e.st, "cycle_start", `{"feature":"f"}`)
	lock := lockToken(t, e.reg, e.st, g)
	all := gitAll(t, e.dir)
	for _, secret := range []string{g, lock, "psk-gemini"} {
		if strings.Contains(all, secret) {
			t.Fatalf("%s is in the repository's objects", secret)
		}
	}
	sum := sha256.Sum256([]byte(lock))
	if !strings.Contains(all, hex.EncodeToString(sum[:])) {
		t.Fatalf("the lock token's hash is not in the state")
	}
}

// gitAll is the content of every object of the repository.
func gitAll(t testing.TB, dir string) string {
	t.Helper()
	return gitstatetest.Git(t, dir, "cat-file", "--batch-all-objects", "--batch")
}

// TestCycleInternalError: a cycle record the tools cannot read (written by
// hand into the state) is INTERNAL_ERROR, not a panic or a wrong answer.
func TestCycleInternalError(t *testing.T) {
	e := newEnv(t)
	sum := sha256.Sum256([]byte("cycle/broken"))
	key := hex.EncodeToString(sum[:10])
	path := "locks/" + gitstate.Fanout(key) + "/" + key + ".json"
	if _, err := e.st.Update(context.Background(), func(tx *gitstate.Tx) error {
		tx.SetMeta(gitstate.Meta{Summary: "test: a broken cycle"})
		return tx.PutRaw(path, []byte(`{"name":"cycle/broken","claim":null,"cycle":"not a cycle","clock":1}`))
	}); err != nil {
		t.Fatal(err)
	}
	cycleRefused(t, e.reg, e.st, "cycle_status", `{"feature":"broken"}`, tools.InternalError)
	cycleRefused(t, e.reg, e.st, "cycle_start", `{"feature":"broken"}`, tools.InternalError)
}

// TestWorkflowAsData: a team's own workflow, set in config, with three
// roles: its phases, handoffs and completion are enforced without code.
func TestWorkflowAsData(t *testing.T) {
	e := newEnv(t)
	w := `{"phases":{"design":"architect","build":"builder","review":"reviewer"},"start":"design",` +
		`"transitions":[{"from":"design","target":"builder","to":"build"},{"from":"build","target":"reviewer","to":"review"},{"from":"review","target":"builder","to":"build"}],` +
		`"complete_from":["review"]}`
	e.ok(human, "config_set", fmt.Sprintf(`{"key":"cycle.workflow","value":%q}`, w))
	cycleRefused(t, e.reg, e.st, "session_open", `{"role":"gemini","psk":"psk-gemini"}`, tools.InvalidRole)
	a, b, r := openSession(t, e.reg, e.st, "architect"), openSession(t, e.reg, e.st, "builder"), openSession(t, e.reg, e.st, "reviewer")
	start := cycleOK(t, e.reg, e.st, "cycle_start", `{"feature":"api"}`)
	cid := start["cycle_id"].(string)
	if start["phase"] != "design" || start["active_role"] != "architect" {
		t.Fatalf("start: %v", start)
	}
	write := func(session, target, producer string) tools.Result {
		tok := lockToken(t, e.reg, e.st, session)
		r, _ := cycleCall(t, e.reg, e.st, "handoff_write", fmt.Sprintf(`{"target":%q,"session_token":%q,"lock_token":%q,"payload":%s}`,
			target, session, tok, payload(cid, "api", producer, target, "x")))
		return r
	}
	if r := write(a, "reviewer", "architect"); r.OK || r.Error.Code != tools.InvalidPhase {
		t.Fatalf("design -> reviewer: %+v", r)
	}
	cycleRefused(t, e.reg, e.st, "handoff_write", fmt.Sprintf(`{"target":"gemini","session_token":%q,"lock_token":"x","payload":{}}`, a), tools.InvalidTarget)
	for _, step := range []struct{ session, target, producer string }{
		{a, "builder", "architect"}, {b, "reviewer", "builder"}, {r, "builder", "reviewer"}, {b, "reviewer", "builder"},
	} {
		if res := write(step.session, step.target, step.producer); !res.OK {
			t.Fatalf("%s -> %s: %+v", step.producer, step.target, res.Error)
		}
	}
	// the builder cannot complete or archive: the reviewer completes
	bt := lockToken(t, e.reg, e.st, r)
	cycleRefused(t, e.reg, e.st, "cycle_complete", fmt.Sprintf(`{"session_token":%q,"lock_token":%q}`, b, bt), tools.LockDenied)
	cycleOK(t, e.reg, e.st, "cycle_complete", fmt.Sprintf(`{"session_token":%q,"lock_token":%q}`, r, bt))
	cycleRefused(t, e.reg, e.st, "cycle_archive", fmt.Sprintf(`{"session_token":%q,"lock_token":%q}`, b, bt), tools.ArchiveNotAllowed)
	out := cycleOK(t, e.reg, e.st, "cycle_archive", fmt.Sprintf(`{"session_token":%q,"lock_token":%q}`, r, bt))
	if out["archive"] != "refs/codex/archive/"+cid {
		t.Fatalf("archive: %v", out)
	}
	got := gitstatetest.Git(t, e.dir, "ls-tree", "-r", "--name-only", "refs/codex/archive/"+cid)
	if want := "config.json\nhandoff/builder.json\nhandoff/reviewer.json\nlock.json\nmanifest.json\nstate.json"; got != want {
		t.Fatalf("archive tree:\n%s\nwant\n%s", got, want)
	}
}

// TestSeveralCycles: two features' cycles run at once, each with its own
// lock; calls that could mean either must name one.
func TestSeveralCycles(t *testing.T) {
	e := newEnv(t)
	g := openSession(t, e.reg, e.st, "gemini")
	cycleOK(t, e.reg, e.st, "cycle_start", `{"feature":"one"}`)
	cycleOK(t, e.reg, e.st, "cycle_start", `{"feature":"two"}`)
	cycleRefused(t, e.reg, e.st, "lock_acquire", fmt.Sprintf(`{"session_token":%q}`, g), tools.InvalidInput)
	cycleRefused(t, e.reg, e.st, "cycle_status", `{}`, tools.InvalidInput)
	t1 := cycleOK(t, e.reg, e.st, "lock_acquire", fmt.Sprintf(`{"session_token":%q,"feature":"one"}`, g))["lock_token"].(string)
	t2 := cycleOK(t, e.reg, e.st, "lock_acquire", fmt.Sprintf(`{"session_token":%q,"feature":"two"}`, g))["lock_token"].(string)
	// one cycle's token does not open the other
	cycleRefused(t, e.reg, e.st, "cycle_complete", fmt.Sprintf(`{"session_token":%q,"lock_token":%q,"feature":"two"}`, g, t1), tools.InvalidPhase)
	st2 := cycleOK(t, e.reg, e.st, "cycle_status", `{"feature":"two"}`)
	if st2["feature"] != "two" || len(st2["running"].([]any)) != 2 {
		t.Fatalf("status of two: %v", st2)
	}
	cid := st2["cycle_id"].(string)
	r, _ := cycleCall(t, e.reg, e.st, "handoff_write", fmt.Sprintf(`{"target":"codex","session_token":%q,"lock_token":%q,"feature":"two","payload":%s}`, g, t1, payload(cid, "two", "gemini", "codex", "x")))
	if r.OK || r.Error.Code != tools.LockDenied {
		t.Fatalf("a token of cycle one in cycle two: %+v", r)
	}
	cycleOK(t, e.reg, e.st, "handoff_write", fmt.Sprintf(`{"target":"codex","session_token":%q,"lock_token":%q,"feature":"two","payload":%s}`, g, t2, payload(cid, "two", "gemini", "codex", "x")))
	// a session opened for one feature stays with it
	g1 := cycleOK(t, e.reg, e.st, "session_open", `{"role":"gemini","psk":"psk-gemini","feature":"one"}`)["session_token"].(string)
	lockToken(t, e.reg, e.st, g1)
	cycleRefused(t, e.reg, e.st, "lock_acquire", fmt.Sprintf(`{"session_token":%q,"feature":"two"}`, g1), tools.InvalidSession)
}

// TestCycleSyncConflict: the same cycle advanced on two machines while
// they were apart (gemini handed it to codex on both, with different
// payloads): after sync both have one outcome, the earlier grant's whole
// (phase, handoff and lock together), a conflict record holding the other
// version, and a mail to the losing role. The archive of the cycle then
// travels to the other machine.
func TestCycleSyncConflict(t *testing.T) {
	remote := newBareRemote(t)
	a, b := newClone(t, "A", remote), newClone(t, "B", remote)
	a.init()
	g := openSession(t, a.reg, a.st, "gemini")
	c := openSession(t, a.reg, a.st, "codex")
	cid := cycleOK(t, a.reg, a.st, "cycle_start", `{"feature":"dual"}`)["cycle_id"].(string)
	a.sync("origin")
	b.sync("origin")

	write := func(cl *clone, note string) {
		tok := lockToken(t, cl.reg, cl.st, g)
		cycleOK(t, cl.reg, cl.st, "handoff_write", fmt.Sprintf(`{"target":"codex","session_token":%q,"lock_token":%q,"payload":%s}`,
			g, tok, payload(cid, "dual", "gemini", "codex", note)))
	}
	write(a, "from A")
	write(b, "from B")
	a.sync("origin")
	b.sync("origin")
	a.sync("origin")
	sameTrees(t, a, b)

	var read []string
	for _, cl := range []*clone{a, b} {
		h := cycleOK(t, cl.reg, cl.st, "handoff_read", `{"target":"codex"}`)
		read = append(read, fmt.Sprint(h["notes"]))
	}
	if read[0] != read[1] || (read[0] != "[from A]" && read[0] != "[from B]") {
		t.Fatalf("handoffs after sync: %v", read)
	}
	st := cycleOK(t, a.reg, a.st, "cycle_status", `{}`)
	if st["phase"] != "backend" || st["active_role"] != "codex" {
		t.Fatalf("status after sync: %v", st)
	}
	conflicts, _ := a.ok(human, "conflict_list", `{}`)
	list := conflicts["conflicts"].([]any)
	if len(list) != 1 {
		t.Fatalf("conflicts: %v", conflicts)
	}
	cf := list[0].(map[string]any)
	if cf["kind"] != "lock" || cf["resource"] != "cycle/dual" || cf["rule"] != "earlier-claim" {
		t.Fatalf("conflict: %v", cf)
	}
	lost := fmt.Sprint(cf["lost_version"])
	if strings.Contains(lost, read[0]) || !strings.Contains(lost, "from") {
		t.Fatalf("the conflict does not keep the losing handoff: %s", lost)
	}
	if cf["mail_id"] == "" || !a.records()[mailRecord("codex", cf["mail_id"].(string))] {
		t.Fatalf("the losing role was not mailed: %v", cf)
	}

	// the cycle goes on from the one outcome, on either machine
	ct := lockToken(t, b.reg, b.st, c)
	cycleOK(t, b.reg, b.st, "handoff_write", fmt.Sprintf(`{"target":"gemini","session_token":%q,"lock_token":%q,"payload":%s}`,
		c, ct, payload(cid, "dual", "codex", "gemini", "done")))
	gt := lockToken(t, b.reg, b.st, g)
	cycleOK(t, b.reg, b.st, "cycle_complete", fmt.Sprintf(`{"session_token":%q,"lock_token":%q}`, g, gt))
	cycleOK(t, b.reg, b.st, "cycle_archive", fmt.Sprintf(`{"session_token":%q,"lock_token":%q}`, g, gt))
	b.sync("origin")
	a.sync("origin")
	sameTrees(t, a, b)
	ref := "refs/codex/archive/" + cid
	if got, want := a.git("rev-parse", ref), b.git("rev-parse", ref); got != want {
		t.Fatalf("archive on A %s, on B %s", got, want)
	}
	if !strings.Contains(a.git("show", ref+":handoff/gemini.json"), "done") {
		t.Fatalf("A's copy of the archive lacks the last handoff")
	}
}

// TestCycleRecordsValidate: the session and cycle-lock records a cycle
// writes pass ValidateRecord (sync accepts them), and tampered ones do not.
func TestCycleRecordsValidate(t *testing.T) {
	e := newEnv(t)
	openSession(t, e.reg, e.st, "gemini")
	cycleOK(t, e.reg, e.st, "cycle_start", `{"feature":"v"}`)
	paths := strings.Fields(gitstatetest.Git(t, e.dir, "ls-tree", "-r", "--name-only", gitstate.RefState, "sessions", "locks"))
	if len(paths) != 2 {
		t.Fatalf("records: %v", paths)
	}
	for _, p := range paths {
		data := []byte(gitstatetest.Git(t, e.dir, "show", gitstate.RefState+":"+p))
		if err := builtin.Registry().Kinds().ValidateRecord(p, data); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var tampered []string
		if strings.HasPrefix(p, "sessions/") {
			tampered = []string{
				strings.Replace(string(data), `"role": "gemini"`, `"role": "Gemini!"`, 1),
				strings.Replace(string(data), `"token_hash": "`, `"token_hash": "00`, 1),
			}
		} else {
			tampered = []string{
				strings.Replace(string(data), `"holder": "gemini"`, `"holder": "codex"`, 1),
				strings.Replace(string(data), `"feature": "v"`, `"feature": "w"`, 1),
				strings.Replace(string(data), `"phase": "frontend"`, `"phase": "nowhere"`, 1),
			}
		}
		for i, bad := range tampered {
			if bad == string(data) {
				t.Fatalf("%s: tampering %d changed nothing", p, i)
			}
			if err := builtin.Registry().Kinds().ValidateRecord(p, []byte(bad)); err == nil {
				t.Errorf("%s: tampered record %d accepted", p, i)
			}
		}
	}
}

// TestWorkflowInvalidInState: a cycle.workflow that config_set would
// refuse but that reached the state anyway (written by another version, or
// by hand) makes the cycle tools CONFIG_INVALID, not a broken cycle.
func TestWorkflowInvalidInState(t *testing.T) {
	e := newEnv(t)
	if _, err := e.st.Update(context.Background(), func(tx *gitstate.Tx) error {
		tx.SetMeta(gitstate.Meta{Summary: "test: a workflow with no way to end"})
		return tx.PutRaw("config/config.json", []byte(`{"entries":{"cycle.workflow":{"value":{"phases":{"a":"x"},"start":"a","transitions":[],"complete_from":[]},"set_by":"someone","set_at":"2026-01-01T00:00:00Z","clock":1}}}`))
	}); err != nil {
		t.Fatal(err)
	}
	cycleRefused(t, e.reg, e.st, "cycle_start", `{"feature":"f"}`, tools.ConfigInvalid)
	cycleRefused(t, e.reg, e.st, "session_open", `{"role":"x","psk":"psk-x"}`, tools.ConfigInvalid)
	if got := gitstatetest.Git(t, e.dir, "ls-tree", "-r", "--name-only", gitstate.RefState, "locks", "sessions"); got != "" {
		t.Fatalf("refused calls wrote %s", got)
	}
}

// TestSessionExpires: a session unused for longer than
// cycle.session_ttl_hours is INVALID_SESSION; a new one works.
func TestSessionExpires(t *testing.T) {
	e := newEnv(t)
	g := openSession(t, e.reg, e.st, "gemini")
	cycleOK(t, e.reg, e.st, "cycle_start", `{"feature":"f"}`)
	lockToken(t, e.reg, e.st, g)
	e.ok(human, "config_set", `{"key":"cycle.session_ttl_hours","value":"1"}`)
	sum := sha256.Sum256([]byte(g))
	id := hex.EncodeToString(sum[:])[:24]
	path := "sessions/" + gitstate.Fanout(id) + "/" + id + ".json"
	if _, err := e.st.Update(context.Background(), func(tx *gitstate.Tx) error {
		var s cycle.Session
		if err := tx.Get(path, &s); err != nil {
			return err
		}
		s.LastSeen = s.LastSeen.Add(-2 * 3600e9)
		tx.SetMeta(gitstate.Meta{Summary: "test: two hours pass"})
		return tx.Put(path, s)
	}); err != nil {
		t.Fatal(err)
	}
	r, _ := cycleCall(t, e.reg, e.st, "lock_acquire", fmt.Sprintf(`{"session_token":%q}`, g))
	if r.OK || r.Error.Code != tools.InvalidSession || r.Error.Details["expired"] != true {
		t.Fatalf("expired session: %+v", r)
	}
	lockToken(t, e.reg, e.st, openSession(t, e.reg, e.st, "gemini"))
}

package builtin_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/lock"
)

// lockFile is where the lock named name must live in the state tree:
// locks/<fanout>/<key>.json, key the first 10 bytes of the name's sha256 in
// hex, fanned out by its last two characters. Computed here independently
// of tools/lock/lock.go, so a change of layout (which would orphan every lock already
// stored) fails the tests.
func lockFile(name string) string {
	sum := sha256.Sum256([]byte(name))
	key := hex.EncodeToString(sum[:10])
	return "locks/" + key[len(key)-2:len(key)-1] + "/" + key[len(key)-1:] + "/" + key + ".json"
}

// lockAt reads the lock's record straight from refs/codex/state (not
// through a tool, which would add a commit).
func (e *env) lockAt(name string) lock.Lock {
	e.t.Helper()
	blob := gitstatetest.Git(e.t, e.dir, "show", gitstate.RefState+":"+lockFile(name))
	var l lock.Lock
	dec := json.NewDecoder(strings.NewReader(blob))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		e.t.Fatalf("lock record %s: %v\n%s", lockFile(name), err, blob)
	}
	return l
}

// lockTrailer is one trailer of the latest call's audit commit.
func (e *env) lockTrailer(key string) string {
	e.t.Helper()
	return e.auditTrailer(e.last, key)
}

// lockRefused makes a call that must be refused with code, and checks that
// the refusal is on the record (one commit, Codex-Error trailer) and changed
// nothing else (same tree).
func (e *env) lockRefused(caller, tool, args string, code tools.Code) *tools.Error {
	e.t.Helper()
	tree, n := e.tree(), e.commits()
	r := e.call(caller, tool, args)
	if r.OK || r.Error == nil || r.Error.Code != code {
		e.t.Fatalf("%s %s %s: got %+v (error %+v), want %s", caller, tool, args, r, r.Error, code)
	}
	if got := e.tree(); got != tree {
		e.t.Errorf("%s %s %s: refusal changed the state tree %s -> %s", caller, tool, args, tree, got)
	}
	if got := e.commits(); got != n {
		e.t.Errorf("%s %s %s: the state's commits %s -> %s; a refusal goes on the reads ref", caller, tool, args, n, got)
	}
	if got := e.auditTrailer(r, gitstate.TrailerError); got != string(code) {
		e.t.Errorf("%s %s %s: Codex-Error trailer %q, want %q", caller, tool, args, got, code)
	}
	if got := e.auditTrailer(r, gitstate.TrailerTool); got != tool {
		e.t.Errorf("Codex-Tool trailer %q, want %q", got, tool)
	}
	return r.Error
}

// lockNames lists lock_list's answer as "name=holder" pairs, in its order.
func lockNames(t *testing.T, list map[string]any) []string {
	t.Helper()
	locks := list["locks"].([]any)
	if int(list["count"].(float64)) != len(locks) {
		t.Errorf("lock_list count %v but %d locks", list["count"], len(locks))
	}
	var out []string
	for _, l := range locks {
		m := l.(map[string]any)
		claim, _ := m["claim"].(map[string]any)
		if claim == nil {
			t.Errorf("lock_list lists a free lock: %v", m)
			continue
		}
		out = append(out, m["name"].(string)+"="+claim["holder"].(string))
	}
	return out
}

func lockTeam(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	e.ok(human, "agent_register", `{"id":"w1","type":"worker"}`)
	e.ok(human, "agent_register", `{"id":"w2","type":"worker"}`)
	return e
}

func TestLockAcquireRecordsTheClaim(t *testing.T) {
	e := lockTeam(t)
	before := time.Now().Add(-time.Second)
	out := e.ok("w1", "lock_acquire", `{"name":"db-migrations","reason":"adding users table"}`)
	clock, err := strconv.ParseUint(e.lockTrailer(gitstate.TrailerClock), 10, 64)
	if err != nil {
		t.Fatalf("Codex-Clock trailer: %v", err)
	}
	if got := e.lockTrailer(gitstate.TrailerTool); got != "lock_acquire" {
		t.Errorf("Codex-Tool = %q", got)
	}
	if got := e.lockTrailer(gitstate.TrailerTarget); got != "db-migrations" {
		t.Errorf("Codex-Target = %q", got)
	}
	if got := e.lockTrailer(gitstate.TrailerActor); got != "w1" {
		t.Errorf("Codex-Actor = %q", got)
	}

	l := e.lockAt("db-migrations")
	if l.Name != "db-migrations" || l.Reason != "adding users table" || l.ExpiresAt != nil {
		t.Errorf("record = %+v", l)
	}
	if l.Claim == nil || l.Claim.Holder != "w1" {
		t.Fatalf("claim = %+v, want holder w1", l.Claim)
	}
	if uint64(l.Claim.Clock) != clock || uint64(l.Clock) != clock {
		t.Errorf("claim clock %d, record clock %d, want the commit's Codex-Clock %d", l.Claim.Clock, l.Clock, clock)
	}
	if l.Claim.At.Before(before) || l.Claim.At.After(time.Now().Add(time.Second)) || !l.UpdatedAt.Equal(l.Claim.At) {
		t.Errorf("claim at %v, updated at %v", l.Claim.At, l.UpdatedAt)
	}
	if l.UpdatedBy != "w1" {
		t.Errorf("updated_by = %q", l.UpdatedBy)
	}
	// the tool's answer is the record it stored
	claim := out["claim"].(map[string]any)
	if out["name"] != "db-migrations" || claim["holder"] != "w1" || claim["clock"].(float64) != float64(clock) || out["reason"] != "adding users table" {
		t.Errorf("answer = %v", out)
	}
	// exactly one lock record in the tree, at the name's hashed path
	files := gitstatetest.Git(t, e.dir, "ls-tree", "-r", "--name-only", gitstate.RefState, "locks")
	if files != lockFile("db-migrations") {
		t.Errorf("locks/ holds %q, want %q", files, lockFile("db-migrations"))
	}
	// taking a lock marks the agent active
	agent := e.ok(human, "agent_show", `{"id":"w1"}`)
	if agent["last_active_at"] == nil {
		t.Errorf("w1 not marked active: %v", agent)
	}
	// and lock_list sees it
	if got := lockNames(t, e.ok("w2", "lock_list", `{}`)); strings.Join(got, ",") != "db-migrations=w1" {
		t.Errorf("lock_list = %v", got)
	}
}

func TestLockDeniedWhileHeld(t *testing.T) {
	e := lockTeam(t)
	e.ok("w1", "lock_acquire", `{"name":"db","reason":"migrating","ttl_seconds":3600}`)
	held := e.lockAt("db")

	err := e.lockRefused("w2", "lock_acquire", `{"name":"db","reason":"mine now"}`, tools.LockDenied)
	if err.Details["holder"] != "w1" || err.Details["name"] != "db" {
		t.Errorf("details = %v", err.Details)
	}
	if _, ok := err.Details["since"]; !ok {
		t.Errorf("details lack since: %v", err.Details)
	}
	if _, ok := err.Details["expires_at"]; !ok {
		t.Errorf("details lack expires_at for a lock with a ttl: %v", err.Details)
	}
	if !strings.Contains(err.Message, "w1") || !strings.Contains(err.Message, "--force") {
		t.Errorf("message does not say who holds it and what to do: %q", err.Message)
	}
	if got := e.lockTrailer(gitstate.TrailerActor); got != "w2" {
		t.Errorf("refusal's Codex-Actor = %q", got)
	}
	after := e.lockAt("db")
	if after.Claim == nil || after.Claim.Holder != "w1" || after.Reason != "migrating" || after.Clock != held.Clock {
		t.Errorf("lock changed by a refusal: %+v", after)
	}
	// a lock nobody has a ttl on has no expires_at detail
	e.ok("w1", "lock_acquire", `{"name":"forever"}`)
	err = e.lockRefused("w2", "lock_acquire", `{"name":"forever"}`, tools.LockDenied)
	if _, ok := err.Details["expires_at"]; ok {
		t.Errorf("details have expires_at for a lock without a ttl: %v", err.Details)
	}
}

func TestLockReacquireRenews(t *testing.T) {
	e := lockTeam(t)
	e.ok("w1", "lock_acquire", `{"name":"release","reason":"first","ttl_seconds":60}`)
	first := e.lockAt("release")
	if first.ExpiresAt == nil || first.ExpiresAt.Sub(first.Claim.At) != 60*time.Second {
		t.Fatalf("ttl 60: expires_at %v, claim at %v", first.ExpiresAt, first.Claim.At)
	}
	time.Sleep(5 * time.Millisecond) // the store's clock has millisecond precision

	e.ok("w1", "lock_acquire", `{"name":"release","reason":"second","ttl_seconds":120}`)
	clock, _ := strconv.ParseUint(e.lockTrailer(gitstate.TrailerClock), 10, 64)
	second := e.lockAt("release")
	if second.Claim.Holder != "w1" || second.Claim.Clock != first.Claim.Clock || !second.Claim.At.Equal(first.Claim.At) {
		t.Errorf("re-acquiring changed the claim: %+v -> %+v", first.Claim, second.Claim)
	}
	if second.Reason != "second" {
		t.Errorf("reason not renewed: %q", second.Reason)
	}
	if second.ExpiresAt == nil || !second.ExpiresAt.After(*first.ExpiresAt) || second.ExpiresAt.Sub(second.UpdatedAt) != 120*time.Second {
		t.Errorf("ttl not renewed: %v -> %v (updated %v)", first.ExpiresAt, second.ExpiresAt, second.UpdatedAt)
	}
	if uint64(second.Clock) != clock || second.Clock <= first.Clock {
		t.Errorf("record clock %d, want the renewal's %d", second.Clock, clock)
	}

	// renewing without a ttl holds it until released; without a reason clears it
	e.ok("w1", "lock_acquire", `{"name":"release"}`)
	third := e.lockAt("release")
	if third.ExpiresAt != nil || third.Reason != "" || !third.Claim.At.Equal(first.Claim.At) {
		t.Errorf("renewal without ttl/reason: %+v", third)
	}
	raw := gitstatetest.Git(t, e.dir, "show", gitstate.RefState+":"+lockFile("release"))
	if strings.Contains(raw, "expires_at") {
		t.Errorf("record keeps an expires_at: %s", raw)
	}
}

// TestLockTTLExpires runs on a clock of its own: a second of the real
// clock can pass between two calls on a busy machine, and the lock would
// expire before the test asks w2 to be refused.
func TestLockTTLExpires(t *testing.T) {
	var mu sync.Mutex
	at := time.Now()
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return at }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); at = at.Add(d) }
	e := newEnvWith(t, gitstate.Options{Now: now})
	e.ok(human, "agent_register", `{"id":"w1","type":"worker"}`)
	e.ok(human, "agent_register", `{"id":"w2","type":"worker"}`)
	e.ok("w1", "lock_acquire", `{"name":"deploy","reason":"short","ttl_seconds":1}`)
	first := e.lockAt("deploy")
	e.lockRefused("w2", "lock_acquire", `{"name":"deploy"}`, tools.LockDenied)

	advance(1100 * time.Millisecond)
	// lock_list still lists an expired lock, with expires_at in the past
	list := e.ok("w2", "lock_list", `{}`)
	if got := lockNames(t, list); strings.Join(got, ",") != "deploy=w1" {
		t.Errorf("lock_list after expiry = %v", got)
	}
	exp, _ := time.Parse(time.RFC3339Nano, list["locks"].([]any)[0].(map[string]any)["expires_at"].(string))
	if !exp.Before(now()) {
		t.Errorf("expires_at %v is not in the past", exp)
	}

	out := e.ok("w2", "lock_acquire", `{"name":"deploy","reason":"taking over"}`)
	clock, _ := strconv.ParseUint(e.lockTrailer(gitstate.TrailerClock), 10, 64)
	l := e.lockAt("deploy")
	if l.Claim == nil || l.Claim.Holder != "w2" || uint64(l.Claim.Clock) != clock || !l.Claim.At.After(first.Claim.At) {
		t.Errorf("claim after expiry = %+v (first %+v)", l.Claim, first.Claim)
	}
	if l.Reason != "taking over" || l.ExpiresAt != nil || out["claim"].(map[string]any)["holder"] != "w2" {
		t.Errorf("record after expiry = %+v", l)
	}
	// now w1 is the one refused
	err := e.lockRefused("w1", "lock_acquire", `{"name":"deploy"}`, tools.LockDenied)
	if err.Details["holder"] != "w2" {
		t.Errorf("details = %v", err.Details)
	}
}

func TestLockRelease(t *testing.T) {
	e := lockTeam(t)
	e.ok(human, "agent_register", `{"id":"boss","type":"supervisor"}`)
	e.ok(human, "agent_register", `{"id":"orc","type":"orchestrator"}`)
	e.ok("w1", "lock_acquire", `{"name":"db","reason":"x"}`)

	// someone else, without force
	err := e.lockRefused("w2", "lock_release", `{"name":"db"}`, tools.LockDenied)
	if err.Details["holder"] != "w1" || err.Details["name"] != "db" {
		t.Errorf("details = %v", err.Details)
	}
	// workers (and orchestrators) may not force
	err = e.lockRefused("w2", "lock_release", `{"name":"db","force":true}`, tools.LockDenied)
	if err.Details["holder"] != "w1" {
		t.Errorf("details = %v", err.Details)
	}
	e.lockRefused("orc", "lock_release", `{"name":"db","force":true}`, tools.LockDenied)
	// a person without force is refused too
	e.lockRefused(human, "lock_release", `{"name":"db"}`, tools.LockDenied)
	if l := e.lockAt("db"); l.Claim == nil || l.Claim.Holder != "w1" {
		t.Fatalf("refusals released the lock: %+v", l)
	}
	if got := e.ok("w1", "mail_list_inbox", `{}`)["count"].(float64); got != 0 {
		t.Fatalf("w1 has mail before any release: %v", got)
	}

	// a person, with force: released, and w1 is told
	out := e.ok(human, "lock_release", `{"name":"db","force":true}`)
	if out["claim"] != nil || out["reason"] != nil {
		t.Errorf("answer = %v", out)
	}
	clock, _ := strconv.ParseUint(e.lockTrailer(gitstate.TrailerClock), 10, 64)
	if got := e.lockTrailer(gitstate.TrailerTool); got != "lock_release" {
		t.Errorf("Codex-Tool = %q", got)
	}
	if got := e.lockTrailer(gitstate.TrailerResult); got != "ok" {
		t.Errorf("Codex-Result = %q", got)
	}
	l := e.lockAt("db")
	if l.Claim != nil || l.Reason != "" || l.ExpiresAt != nil || l.UpdatedBy != human || uint64(l.Clock) != clock {
		t.Errorf("record after forced release = %+v", l)
	}
	inbox := e.ok("w1", "mail_list_inbox", `{}`)
	if inbox["count"].(float64) != 1 {
		t.Fatalf("w1's inbox = %v", inbox)
	}
	m := inbox["mails"].([]any)[0].(map[string]any)
	if m["from"] != human || m["from_type"] != "human" || m["to"] != "w1" ||
		!strings.Contains(m["subject"].(string), "db") || !strings.Contains(m["subject"].(string), "released") ||
		!strings.Contains(m["body"].(string), "no longer hold") {
		t.Errorf("mail to w1 = %v", m)
	}
	// nobody else was mailed
	if got := e.ok("w2", "mail_list_inbox", `{}`)["count"].(float64); got != 0 {
		t.Errorf("w2 got mail: %v", got)
	}
	if got := e.ok(human, "mail_list_inbox", `{}`)["count"].(float64); got != 0 {
		t.Errorf("the humans got mail: %v", got)
	}

	// released: w2 takes it; a supervisor may force too, and w2 is told
	e.ok("w2", "lock_acquire", `{"name":"db"}`)
	e.ok("boss", "lock_release", `{"name":"db","force":true}`)
	if l := e.lockAt("db"); l.Claim != nil || l.UpdatedBy != "boss" {
		t.Errorf("after supervisor's release: %+v", l)
	}
	inbox = e.ok("w2", "mail_list_inbox", `{}`)
	if inbox["count"].(float64) != 1 || inbox["mails"].([]any)[0].(map[string]any)["from"] != "boss" {
		t.Errorf("w2's inbox = %v", inbox)
	}

	// the holder releases its own lock: no force needed, nobody mailed
	e.ok("w1", "lock_acquire", `{"name":"db"}`)
	e.ok("w1", "lock_release", `{"name":"db"}`)
	if l := e.lockAt("db"); l.Claim != nil || l.UpdatedBy != "w1" {
		t.Errorf("after own release: %+v", l)
	}
	if got := e.ok("w1", "mail_list_inbox", `{"include_read":true}`)["count"].(float64); got != 1 {
		t.Errorf("w1 mailed about its own release: %v mails", got)
	}
	// a lock held by a person, forced by another person: to the humans' inbox
	e.ok(human, "lock_acquire", `{"name":"db"}`)
	e.ok("human:other@example.com", "lock_release", `{"name":"db","force":true}`)
	inbox = e.ok(human, "mail_list_inbox", `{}`)
	if inbox["count"].(float64) != 1 || inbox["mails"].([]any)[0].(map[string]any)["to"] != tools.HumanInbox {
		t.Errorf("humans' inbox = %v", inbox)
	}
}

func TestLockReleaseFree(t *testing.T) {
	e := lockTeam(t)
	// never taken
	err := e.lockRefused("w1", "lock_release", `{"name":"never"}`, tools.ResourceNotFound)
	if err.Details["name"] != "never" {
		t.Errorf("details = %v", err.Details)
	}
	e.lockRefused(human, "lock_release", `{"name":"never","force":true}`, tools.ResourceNotFound)
	if _, gerr := gitstatetest.GitErr(e.dir, "cat-file", "-e", gitstate.RefState+":"+lockFile("never")); gerr == nil {
		t.Error("releasing a lock never taken created its record")
	}
	// taken and released
	e.ok("w1", "lock_acquire", `{"name":"once"}`)
	e.ok("w1", "lock_release", `{"name":"once"}`)
	e.lockRefused("w1", "lock_release", `{"name":"once"}`, tools.ResourceNotFound)
	e.lockRefused("w2", "lock_release", `{"name":"once"}`, tools.ResourceNotFound)
}

func TestLockNames(t *testing.T) {
	e := lockTeam(t)
	bad := map[string]string{
		"empty":            "",
		"leading space":    " lead",
		"trailing space":   "trail ",
		"201 bytes":        strings.Repeat("a", 201),
		"newline":          "a\nb",
		"tab":              "a\tb",
		"control char":     "a\x00b",
		"only spaces":      "   ",
		"line separator":   "a\u2028b",
		"201 bytes, utf-8": strings.Repeat("é", 100) + "a", // 201 bytes, 101 runes
	}
	// (control characters and invalid UTF-8 are refused where arguments
	// enter, naming the field; TestControlCharactersRefused)
	for what, name := range bad {
		arg, _ := json.Marshal(map[string]any{"name": name})
		for _, tool := range []string{"lock_acquire", "lock_release"} {
			err := e.lockRefused("w1", tool, string(arg), tools.InvalidInput)
			if err.Details["name"] != name && err.Details["field"] != "name" {
				t.Errorf("%s, %s: details = %v", what, tool, err.Details)
			}
		}
	}
	if got := gitstatetest.Git(t, e.dir, "ls-tree", "-r", "--name-only", gitstate.RefState, "locks"); got != "" {
		t.Fatalf("invalid names made records: %s", got)
	}
	e.lockRefused("w1", "lock_acquire", `{"name":"ok","ttl_seconds":-1}`, tools.InvalidInput)

	// good names: a path, the 200-byte limit, unicode, inner spaces
	good := []string{"src/api", "../../etc/passwd", strings.Repeat("a", 200), "naïve lock ✓", "two words", "x"}
	for _, name := range good {
		arg, _ := json.Marshal(map[string]any{"name": name})
		out := e.ok("w1", "lock_acquire", string(arg))
		if out["name"] != name {
			t.Errorf("acquire %q answered %v", name, out["name"])
		}
		if l := e.lockAt(name); l.Name != name || l.Claim == nil || l.Claim.Holder != "w1" {
			t.Errorf("record for %q = %+v", name, l)
		}
	}
	files := strings.Split(gitstatetest.Git(t, e.dir, "ls-tree", "-r", "--name-only", gitstate.RefState, "locks"), "\n")
	if len(files) != len(good) {
		t.Errorf("locks/ holds %d files for %d names: %v", len(files), len(good), files)
	}
	list := e.ok("w2", "lock_list", `{}`)
	got := strings.Join(lockNames(t, list), "\n")
	var want []string
	for _, n := range []string{"../../etc/passwd", strings.Repeat("a", 200), "naïve lock ✓", "src/api", "two words", "x"} { // sorted by name (bytes)
		want = append(want, n+"=w1")
	}
	if got != strings.Join(want, "\n") {
		t.Errorf("lock_list =\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	// a path-like name is a name, not a path: releasing it works
	e.ok("w1", "lock_release", `{"name":"src/api"}`)
	if l := e.lockAt("src/api"); l.Claim != nil {
		t.Errorf("src/api still held: %+v", l)
	}
}

func TestLockList(t *testing.T) {
	e := lockTeam(t)
	if got := e.ok("w1", "lock_list", `{}`); got["count"].(float64) != 0 || len(got["locks"].([]any)) != 0 {
		t.Errorf("empty lock_list = %v", got)
	}
	e.ok("w1", "lock_acquire", `{"name":"c"}`)
	e.ok("w2", "lock_acquire", `{"name":"b"}`)
	e.ok("w1", "lock_acquire", `{"name":"a"}`)
	e.ok(human, "lock_acquire", `{"name":"d"}`)
	e.ok("w1", "lock_acquire", `{"name":"gone"}`)
	e.ok("w1", "lock_release", `{"name":"gone"}`)

	tree := e.tree()
	tests := []struct{ holder, want string }{
		{"", "a=w1,b=w2,c=w1,d=" + human},
		{"w1", "a=w1,c=w1"},
		{"w2", "b=w2"},
		{human, "d=" + human},
		{"nobody", ""},
	}
	for _, tt := range tests {
		arg, _ := json.Marshal(map[string]any{"holder": tt.holder})
		if tt.holder == "" {
			arg = []byte(`{}`)
		}
		if got := strings.Join(lockNames(t, e.ok("w2", "lock_list", string(arg))), ","); got != tt.want {
			t.Errorf("lock_list %s = %s, want %s", arg, got, tt.want)
		}
	}
	// listing changes nothing but the audit trail (and w2's last activity is
	// not recorded by a read)
	if got := e.tree(); got != tree {
		t.Errorf("lock_list changed the tree")
	}
	if got := e.lockTrailer(gitstate.TrailerTool); got != "lock_list" {
		t.Errorf("Codex-Tool = %q", got)
	}
	// the released lock's record stays in the tree, free
	if l := e.lockAt("gone"); l.Claim != nil {
		t.Errorf("released lock = %+v", l)
	}
}

func TestLockPermissions(t *testing.T) {
	e := newEnv(t)
	for _, typ := range []string{"review", "coding", "planning", "orchestrator", "supervisor", "worker"} {
		e.ok(human, "agent_register", `{"id":"a-`+typ+`","type":"`+typ+`"}`)
		name := "res-" + typ
		e.ok("a-"+typ, "lock_acquire", `{"name":"`+name+`"}`)
		if l := e.lockAt(name); l.Claim == nil || l.Claim.Holder != "a-"+typ {
			t.Errorf("%s: record = %+v", typ, l)
		}
		if got := lockNames(t, e.ok("a-"+typ, "lock_list", `{"holder":"a-`+typ+`"}`)); strings.Join(got, ",") != name+"=a-"+typ {
			t.Errorf("%s: lock_list = %v", typ, got)
		}
		e.ok("a-"+typ, "lock_release", `{"name":"`+name+`"}`)
		if got := e.lockTrailer(gitstate.TrailerActorType); got != typ {
			t.Errorf("%s: Codex-Actor-Type = %q", typ, got)
		}
	}
	// the policy decides: deny lock.* to review agents and they are refused
	e.ok(human, "config_set", `{"key":"policy.review.deny","value":"lock.*"}`)
	err := e.lockRefused("a-review", "lock_acquire", `{"name":"res-review"}`, tools.PermissionDenied)
	if err.Details["permission"] != "lock.acquire" {
		t.Errorf("details = %v", err.Details)
	}
	// an unregistered caller cannot take a lock
	e.lockRefused("ghost", "lock_acquire", `{"name":"x"}`, tools.AgentNotFound)
}

// TestLockHugeTTL: a ttl so large that ttl_seconds * 1e9 overflows int64
// nanoseconds must not turn into an expiry in the past (which would let
// anyone take the lock at once). It is either refused as INVALID_INPUT or
// the lock stays held.
func TestLockHugeTTL(t *testing.T) {
	e := lockTeam(t)
	for _, ttl := range []string{"9223372037", "18446744073", "100000000000"} {
		name := "huge-" + ttl
		r := e.call("w1", "lock_acquire", `{"name":"`+name+`","ttl_seconds":`+ttl+`}`)
		if !r.OK {
			if r.Error.Code != tools.InvalidInput {
				t.Errorf("ttl %s: refused with %+v, want INVALID_INPUT", ttl, r.Error)
			}
			continue
		}
		l := e.lockAt(name)
		if l.ExpiresAt != nil && !l.ExpiresAt.After(l.Claim.At) {
			t.Errorf("BUG: ttl_seconds %s gives expires_at %v, before the claim at %v (time.Duration overflow)", ttl, l.ExpiresAt, l.Claim.At)
		}
		if r := e.call("w2", "lock_acquire", `{"name":"`+name+`"}`); r.OK {
			t.Errorf("BUG: w2 took %s right after w1 took it with ttl_seconds %s", name, ttl)
		}
	}
}

package builtin_test

// Sync between real repositories: clones A and B (and C) of a bare remote
// in temporary directories, driven through tools.Registry.Call and
// tools.Sync exactly as the CLI and MCP adapters drive them.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/gitcodex/git-codex/tools/mail"
)

// clone is one machine: a repository with its own store.
type clone struct {
	t    testing.TB
	name string
	dir  string
	st   *gitstate.Store
	reg  *tools.Registry
}

// newBareRemote makes an empty bare repository, the shared remote.
func newBareRemote(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "remote.git")
	if out, err := gitstatetest.GitErr(os.TempDir(), "init", "-q", "--bare", dir); err != nil {
		t.Fatalf("git init --bare: %v\n%s", err, out)
	}
	return dir
}

// newClone makes a repository with remote as "origin" (no state yet).
func newClone(t testing.TB, name, remote string) *clone {
	t.Helper()
	dir := gitstatetest.NewRepo(t)
	if remote != "" {
		gitstatetest.Git(t, dir, "remote", "add", "origin", remote)
	}
	return openClone(t, name, dir)
}

func openClone(t testing.TB, name, dir string) *clone {
	t.Helper()
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &clone{t: t, name: name, dir: dir, st: st, reg: builtin.Registry()}
}

func (c *clone) init() {
	c.t.Helper()
	if _, err := builtin.Registry().Init(context.Background(), c.st, tools.Origin{ID: human}); err != nil {
		c.t.Fatal(err)
	}
}

func (c *clone) call(caller, tool, args string) tools.Result {
	return c.reg.CallAs(context.Background(), c.st, tools.Origin{ID: caller}, tool, json.RawMessage(args))
}

// ok runs a call that must succeed and returns its data and commit.
func (c *clone) ok(caller, tool, args string) (map[string]any, string) {
	c.t.Helper()
	r := c.call(caller, tool, args)
	if !r.OK {
		c.t.Fatalf("%s: %s %s %s: %+v", c.name, caller, tool, args, r.Error)
	}
	b, _ := json.Marshal(r.Data)
	var m map[string]any
	json.Unmarshal(b, &m)
	return m, r.Commit
}

func (c *clone) sync(remote string) tools.SyncResult {
	c.t.Helper()
	res, err := builtin.Registry().Sync(context.Background(), c.st, tools.Origin{ID: human}, remote, true, nil)
	if err != nil {
		c.t.Fatalf("%s: sync %s: %v", c.name, remote, err)
	}
	return res
}

func (c *clone) git(args ...string) string {
	c.t.Helper()
	return gitstatetest.Git(c.t, c.dir, args...)
}

func (c *clone) tip() string  { return c.git("rev-parse", gitstate.RefState) }
func (c *clone) tree() string { return c.git("rev-parse", gitstate.RefState+"^{tree}") }

// history is every commit hash in the state's history.
func (c *clone) history() map[string]bool {
	out := map[string]bool{}
	for _, h := range strings.Fields(c.git("rev-list", gitstate.RefState)) {
		out[h] = true
	}
	return out
}

// targets is every Codex-Target trailer in the state's history.
func (c *clone) targets() map[string]bool {
	out := map[string]bool{}
	for _, v := range strings.Fields(c.git("log", "--format=%(trailers:key=Codex-Target,valueonly)", gitstate.RefState)) {
		out[v] = true
	}
	return out
}

// records is the state tree's paths.
func (c *clone) records() map[string]bool {
	out := map[string]bool{}
	for _, p := range strings.Split(c.git("ls-tree", "-r", "--name-only", gitstate.RefState), "\n") {
		out[p] = true
	}
	return out
}

func (c *clone) mail(to, id string) mail.Mail {
	c.t.Helper()
	var m mail.Mail
	b := c.git("show", gitstate.RefState+":mail/"+to+"/"+gitstate.Fanout(id)+"/"+id+".json")
	if err := json.Unmarshal([]byte(b), &m); err != nil {
		c.t.Fatal(err)
	}
	return m
}

func mailRecord(to, id string) string {
	return "mail/" + to + "/" + gitstate.Fanout(id) + "/" + id + ".json"
}

func decisionRecord(id string) string {
	return "decisions/" + gitstate.Fanout(id) + "/" + id + ".json"
}

func sameTrees(t testing.TB, clones ...*clone) {
	t.Helper()
	want := clones[0].tree()
	for _, c := range clones[1:] {
		if got := c.tree(); got != want {
			t.Fatalf("%s has tree %s, %s has %s", c.name, got, clones[0].name, want)
		}
	}
}

// TestSyncABA: two clones change the state apart, then sync in turn (A, B,
// A). Both end with the identical tree, and each history holds every
// commit, and every record id, from both sides.
func TestSyncABA(t *testing.T) {
	remote := newBareRemote(t)
	a, b := newClone(t, "A", remote), newClone(t, "B", remote)
	a.init()
	a.ok(human, "agent_register", `{"id":"alice","type":"worker"}`)
	a.ok(human, "agent_register", `{"id":"bob","type":"supervisor"}`)
	res := a.sync("origin")
	if res.Found || !res.Pushed {
		t.Fatalf("first sync into an empty remote: %+v", res)
	}
	res = b.sync("origin")
	if !res.Found || res.Merge.Status != gitstate.MergeFastForward || b.tip() != a.tip() {
		t.Fatalf("B adopting the remote's state: %+v", res)
	}

	// apart: each side sends, reads, decides, configures
	var commits, ids []string
	do := func(c *clone, caller, tool, args, key string) map[string]any {
		t.Helper()
		m, commit := c.ok(caller, tool, args)
		commits = append(commits, commit)
		if key != "" {
			ids = append(ids, m[key].(string))
		}
		return m
	}
	m1 := do(a, "alice", "mail_send", `{"to":"bob","subject":"from A","body":"1"}`, "mail_id")
	do(a, "bob", "mail_read", `{"mail_id":"`+m1["mail_id"].(string)+`"}`, "")
	d1 := do(a, "alice", "log_decision", `{"title":"A decides","body":"x"}`, "log_id")
	do(a, human, "config_set", `{"key":"mail.max_body_bytes","value":"5000"}`, "")
	m2 := do(b, "alice", "mail_send", `{"to":"bob","subject":"from B","body":"2"}`, "mail_id")
	d2 := do(b, "bob", "log_decision", `{"title":"B decides","body":"y"}`, "log_id")
	do(b, human, "config_set", `{"key":"mail.max_subject_bytes","value":"100"}`, "")
	do(b, human, "agent_register", `{"id":"carol","type":"coding"}`, "")

	ra := a.sync("origin")
	rb := b.sync("origin")
	ra2 := a.sync("origin")
	if ra.Merge.Status != gitstate.MergeUpToDate || rb.Merge.Status != gitstate.MergeMerged || ra2.Merge.Status != gitstate.MergeFastForward {
		t.Fatalf("statuses A %s, B %s, A %s; want up-to-date, merged, fast-forward", ra.Merge.Status, rb.Merge.Status, ra2.Merge.Status)
	}
	// alice sent mail on both sides: her agent record (last activity) was
	// changed on both, and the config on both
	if got := rb.Merge.Report.Resolved; !contains(got, "agents/alice.json") || !contains(got, "config/config.json") {
		t.Errorf("resolved %v, want agents/alice.json and config/config.json", got)
	}
	sameTrees(t, a, b)
	if a.tip() != b.tip() {
		t.Errorf("tips differ after A, B, A: %s vs %s", a.tip(), b.tip())
	}
	if r := gitstatetest.Git(t, remote, "rev-parse", gitstate.RefState); r != a.tip() {
		t.Errorf("remote at %s, A at %s", r, a.tip())
	}
	merge := rb.Merge.Commit
	if parents := strings.Fields(b.git("rev-list", "--parents", "-n1", merge)); len(parents) != 3 {
		t.Errorf("merge commit %s has parents %v, want two", merge, parents[1:])
	}
	if msg := b.git("log", "-1", "--format=%B", merge); !strings.Contains(msg, "Codex-Tool: sync") || !strings.Contains(msg, "Codex-Actor: "+human) {
		t.Errorf("merge commit message:\n%s", msg)
	}
	for _, cl := range []*clone{a, b} {
		hist, targets, recs := cl.history(), cl.targets(), cl.records()
		for _, c := range commits {
			if !hist[c] {
				t.Errorf("%s's history lacks commit %s", cl.name, c)
			}
		}
		for _, id := range ids {
			if !targets[id] {
				t.Errorf("%s's log lacks Codex-Target %s", cl.name, id)
			}
		}
		for _, p := range []string{mailRecord("bob", m1["mail_id"].(string)), mailRecord("bob", m2["mail_id"].(string)),
			decisionRecord(d1["log_id"].(string)), decisionRecord(d2["log_id"].(string)), "agents/carol.json"} {
			if !recs[p] {
				t.Errorf("%s's state lacks %s", cl.name, p)
			}
		}
		if !cl.mail("bob", m1["mail_id"].(string)).IsRead {
			t.Errorf("%s: the mail read on A is unread", cl.name)
		}
		cfg := cl.git("show", gitstate.RefState+":config/config.json")
		if !strings.Contains(cfg, "mail.max_body_bytes") || !strings.Contains(cfg, "mail.max_subject_bytes") {
			t.Errorf("%s: config lost a key:\n%s", cl.name, cfg)
		}
	}
	// clocks advance past everything seen: B's next commit is later than
	// every commit on either side
	_, c := b.ok("alice", "mail_list_inbox", `{}`)
	maxClock := 0
	for _, v := range strings.Fields(b.git("log", "--format=%(trailers:key=Codex-Clock,valueonly)", c+"^@")) {
		n, _ := strconv.Atoi(v)
		maxClock = max(maxClock, n)
	}
	if got, _ := strconv.Atoi(b.git("log", "-1", "--format=%(trailers:key=Codex-Clock,valueonly)", c)); got <= maxClock {
		t.Errorf("clock after the merge %d, want > %d", got, maxClock)
	}
	// a sync with nothing new changes nothing
	before := a.tip()
	if res := a.sync("origin"); res.Merge.Status != gitstate.MergeUpToDate || a.tip() != before || !res.Pushed {
		t.Errorf("no-op sync: %+v", res)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestSyncFreshClone: `git clone` brings no refs/codex/*; sync adopts the
// remote's state.
func TestSyncFreshClone(t *testing.T) {
	remote := newBareRemote(t)
	a := newClone(t, "A", remote)
	a.git("commit", "-q", "--allow-empty", "-m", "code")
	a.git("push", "-q", "origin", "main")
	a.init()
	a.ok(human, "agent_register", `{"id":"alice","type":"worker"}`)
	a.sync("origin")
	dir := filepath.Join(t.TempDir(), "c")
	gitstatetest.Git(t, os.TempDir(), "clone", "-q", remote, dir)
	if _, err := gitstatetest.GitErr(dir, "rev-parse", "--verify", "-q", gitstate.RefState); err == nil {
		t.Fatal("git clone brought refs/codex/state")
	}
	c := openClone(t, "C", dir)
	res := c.sync("origin")
	if !res.Found || res.Merge.Status != gitstate.MergeFastForward || !res.Pushed {
		t.Fatalf("sync in a fresh clone: %+v", res)
	}
	if c.tip() != a.tip() {
		t.Fatalf("clone at %s, A at %s", c.tip(), a.tip())
	}
	c.ok("alice", "agent_get_status", `{}`)
}

// TestSyncUnreachableRemote: a remote that cannot be reached is
// REMOTE_ERROR, and nothing local changes.
func TestSyncUnreachableRemote(t *testing.T) {
	a := newClone(t, "A", "")
	a.init()
	a.ok(human, "agent_register", `{"id":"alice","type":"worker"}`)
	a.git("remote", "add", "bad", "/nonexistent/remote.git")
	closed := freePort(t)
	for _, remote := range []string{"bad", "/nonexistent/other.git", "git://127.0.0.1:" + closed + "/remote.git"} {
		tip, tree := a.tip(), a.tree()
		refs := a.git("for-each-ref")
		_, err := builtin.Registry().Sync(context.Background(), a.st, tools.Origin{ID: human}, remote, true, nil)
		if e := tools.AsError(err); err == nil || e.Code != tools.RemoteError {
			t.Fatalf("sync %s: %v, want REMOTE_ERROR", remote, err)
		}
		if a.tip() != tip || a.tree() != tree || a.git("for-each-ref") != refs {
			t.Fatalf("sync %s changed local refs", remote)
		}
	}
	// a remote not configured at all is an error of its own kind too
	if _, err := builtin.Registry().Sync(context.Background(), a.st, tools.Origin{ID: human}, "nosuchremote", true, nil); tools.AsError(err).Code != tools.RemoteError {
		t.Fatalf("unknown remote: %v", err)
	}
}

// freePort returns a TCP port on 127.0.0.1 that nothing listens on.
func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

// TestSyncRetriesWhenTheRemoteMoved: between A's fetch and A's push, the
// remote's state moves to C's (the remote's pre-receive hook moves it, on
// the first push only, before receive-pack updates the ref). The push is refused, and sync fetches, merges and pushes
// again; C's change and A's both end up on the remote.
func TestSyncRetriesWhenTheRemoteMoved(t *testing.T) {
	remote := newBareRemote(t)
	a, c := newClone(t, "A", remote), newClone(t, "C", remote)
	a.init()
	a.ok(human, "agent_register", `{"id":"alice","type":"worker"}`)
	a.sync("origin")
	c.sync("origin")
	mc, _ := c.ok("alice", "mail_send", `{"to":"alice","subject":"from C","body":"c"}`)
	// C's state is in the remote's objects, not yet on its state ref
	c.git("push", "-q", "origin", gitstate.RefState+":refs/pending/c")
	ma, _ := a.ok("alice", "mail_send", `{"to":"alice","subject":"from A","body":"a"}`)

	marker := filepath.Join(t.TempDir(), "moved")
	// (receive-pack forbids ref updates from its quarantine; refs/pending/c
	// and its objects are already in the remote)
	hook := fmt.Sprintf("#!/bin/sh\nif [ ! -e %q ]; then\n  touch %q\n  unset GIT_QUARANTINE_PATH\n  git --git-dir=%q update-ref %s refs/pending/c\nfi\n",
		marker, marker, remote, gitstate.RefState)
	if err := os.WriteFile(filepath.Join(remote, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	res := a.sync("origin")
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("the hook never moved the remote")
	}
	if res.Attempts < 2 || !res.Pushed || res.Merge.Status != gitstate.MergeMerged {
		t.Fatalf("sync: %+v; want a merge, pushed on attempt >= 2", res)
	}
	if r := gitstatetest.Git(t, remote, "rev-parse", gitstate.RefState); r != a.tip() {
		t.Fatalf("remote at %s, A at %s", r, a.tip())
	}
	recs := a.records()
	for _, id := range []string{mc["mail_id"].(string), ma["mail_id"].(string)} {
		if !recs[mailRecord("alice", id)] {
			t.Errorf("A lacks %s", id)
		}
	}
	c.sync("origin")
	sameTrees(t, a, c)
}

// TestSyncRemoteRefuses: a remote that refuses the push for its own reasons
// (a pre-receive hook) is REMOTE_ERROR at once, not retried as if it had
// moved (which would end, five rounds later, in a misleading
// PUSH_REJECTED).
func TestSyncRemoteRefuses(t *testing.T) {
	remote := newBareRemote(t)
	a := newClone(t, "A", remote)
	a.init()
	a.sync("origin")
	if err := os.WriteFile(filepath.Join(remote, "hooks", "pre-receive"), []byte("#!/bin/sh\necho no pushes today >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// a sync with nothing to push pushes nothing: the hook never runs
	if res := a.sync("origin"); !res.Pushed || res.Merge.Status != gitstate.MergeUpToDate {
		t.Fatalf("no-op sync: %+v", res)
	}
	a.ok(human, "agent_register", `{"id":"alice","type":"worker"}`)
	res, err := builtin.Registry().Sync(context.Background(), a.st, tools.Origin{ID: human}, "origin", true, nil)
	if e := tools.AsError(err); err == nil || e.Code != tools.RemoteError || res.Attempts != 1 {
		t.Fatalf("sync to a refusing remote: %+v, %v; want REMOTE_ERROR after one attempt", res, err)
	}
	if !strings.Contains(err.Error(), "pre-receive hook declined") || !strings.Contains(err.Error(), "refused the state") || strings.Contains(err.Error(), "unreachable") {
		t.Errorf("the error does not say the remote refused, and why: %v", err)
	}
}

// TestSyncRunsNoPrePushHook: the repository's pre-push hook (husky,
// pre-commit) checks the code people push; the state is not code, and a
// failing hook must not stop agents' coordination (nor be reported as an
// unreachable remote). Sync pushes the state without running it; a plain
// `git push` of a branch still runs it.
func TestSyncRunsNoPrePushHook(t *testing.T) {
	remote := newBareRemote(t)
	a := newClone(t, "A", remote)
	a.init()
	ran := filepath.Join(t.TempDir(), "ran")
	hook := fmt.Sprintf("#!/bin/sh\ntouch %q\necho 'lint failed' >&2\nexit 1\n", ran)
	if err := os.WriteFile(filepath.Join(a.dir, ".git", "hooks", "pre-push"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	a.ok(human, "agent_register", `{"id":"alice","type":"worker"}`)
	if res := a.sync("origin"); !res.Pushed {
		t.Fatalf("sync: %+v; want the state pushed", res)
	}
	if r := gitstatetest.Git(t, remote, "rev-parse", gitstate.RefState); r != a.tip() {
		t.Fatalf("remote at %s, A at %s", r, a.tip())
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("sync ran the pre-push hook")
	}
	gitstatetest.Git(t, a.dir, "commit", "-q", "--allow-empty", "-m", "code")
	if _, err := gitstatetest.GitErr(a.dir, "push", "-q", "origin", "HEAD:refs/heads/code"); err == nil {
		t.Fatal("a plain git push of a branch got past the failing hook")
	}
	if _, err := os.Stat(ran); err != nil {
		t.Fatal("git push of a branch did not run the hook")
	}
}

// TestSyncWhileWriting: four writers send mail on A continuously while A
// syncs again and again and B writes and syncs too. Every mail a writer
// saw acknowledged is on both clones at the end.
func TestSyncWhileWriting(t *testing.T) {
	remote := newBareRemote(t)
	a, b := newClone(t, "A", remote), newClone(t, "B", remote)
	a.init()
	a.ok(human, "agent_register", `{"id":"alice","type":"worker"}`)
	a.ok(human, "agent_register", `{"id":"bob","type":"worker"}`)
	a.sync("origin")
	b.sync("origin")

	const writers = 4
	stop := make(chan struct{})
	var mu sync.Mutex
	var acked []string // "to/id"
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		// each writer opens its own store, as a separate process would
		st, err := gitstate.Open(a.dir, gitstate.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			reg := builtin.Registry()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				r := reg.CallAs(context.Background(), st, tools.Origin{ID: "alice"}, "mail_send",
					json.RawMessage(fmt.Sprintf(`{"to":"bob","subject":"w%d #%d","body":"x"}`, w, i)))
				if !r.OK {
					errs <- fmt.Errorf("writer %d: %+v", w, r.Error)
					return
				}
				mu.Lock()
				acked = append(acked, "bob/"+r.Data.(mail.MailSent).MailID)
				mu.Unlock()
				time.Sleep(5 * time.Millisecond) // leave some CPU to git
			}
		}(w)
	}
	rounds := 3
	if testing.Short() {
		rounds = 2
	}
	var fromB []string
	for i := 0; i < rounds; i++ {
		a.sync("origin")
		m, _ := b.ok("bob", "mail_send", fmt.Sprintf(`{"to":"alice","subject":"b%d","body":"y"}`, i))
		fromB = append(fromB, "alice/"+m["mail_id"].(string))
		b.sync("origin")
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	a.sync("origin")
	b.sync("origin")
	a.sync("origin")
	sameTrees(t, a, b)
	mu.Lock()
	defer mu.Unlock()
	if len(acked) < writers {
		t.Fatalf("only %d mails written", len(acked))
	}
	t.Logf("%d mails from %d writers during %d sync rounds", len(acked), writers, rounds)
	for _, cl := range []*clone{a, b} {
		recs := cl.records()
		for _, m := range append(append([]string{}, acked...), fromB...) {
			to, id, _ := strings.Cut(m, "/")
			if !recs[mailRecord(to, id)] {
				t.Errorf("%s lost acknowledged mail %s", cl.name, m)
			}
		}
	}
}

// TestSyncNotesUnion: notes written on both sides, on the same commit and
// on different ones, end up on both as the union of their lines.
func TestSyncNotesUnion(t *testing.T) {
	remote := newBareRemote(t)
	a := newClone(t, "A", remote)
	a.git("commit", "-q", "--allow-empty", "-m", "one")
	x := a.git("rev-parse", "HEAD")
	a.git("commit", "-q", "--allow-empty", "-m", "two")
	y := a.git("rev-parse", "HEAD")
	a.git("push", "-q", "origin", "main")
	a.init()
	a.sync("origin")
	dir := filepath.Join(t.TempDir(), "b")
	gitstatetest.Git(t, os.TempDir(), "clone", "-q", remote, dir)
	gitstatetest.Git(t, dir, "config", "user.email", "b@example.com")
	gitstatetest.Git(t, dir, "config", "user.name", "B")
	b := openClone(t, "B", dir)
	b.sync("origin")

	a.git("notes", "--ref=codex", "add", "-m", "a: x reviewed", x)
	a.git("notes", "--ref=codex", "append", "-m", "shared line", x)
	a.git("notes", "--ref=codex", "add", "-m", "a: y only", y)
	a.git("notes", "--ref=codex-reviews", "add", "-m", "review by a", y)
	b.git("notes", "--ref=codex", "add", "-m", "b: x tested", x)
	b.git("notes", "--ref=codex", "append", "-m", "shared line", x)

	a.sync("origin")
	b.sync("origin")
	a.sync("origin")
	for _, cl := range []*clone{a, b} {
		gotX := lines(cl.git("notes", "--ref=codex", "show", x))
		if want := []string{"a: x reviewed", "b: x tested", "shared line"}; !equalStrings(gotX, want) {
			t.Errorf("%s: notes on x = %q, want %q", cl.name, gotX, want)
		}
		if got := cl.git("notes", "--ref=codex", "show", y); got != "a: y only" {
			t.Errorf("%s: notes on y = %q", cl.name, got)
		}
		if got := cl.git("notes", "--ref=codex-reviews", "show", y); got != "review by a" {
			t.Errorf("%s: codex-reviews notes on y = %q", cl.name, got)
		}
	}
	if a.git("rev-parse", "refs/notes/codex") != b.git("rev-parse", "refs/notes/codex") {
		t.Errorf("notes refs differ after A, B, A")
	}
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

func equalStrings(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}

// TestSyncOverGitDaemon: A and B sync through a real network transport,
// `git daemon` with receive-pack enabled on 127.0.0.1.
func TestSyncOverGitDaemon(t *testing.T) {
	gitDaemon(t)
	base := t.TempDir()
	remote := filepath.Join(base, "remote.git")
	gitstatetest.Git(t, base, "init", "-q", "--bare", remote)
	url := startGitDaemon(t, base) + "/remote.git"

	a, b := newClone(t, "A", url), newClone(t, "B", url)
	a.init()
	a.ok(human, "agent_register", `{"id":"alice","type":"worker"}`)
	if res := a.sync("origin"); !res.Pushed {
		t.Fatalf("A: %+v", res)
	}
	if res := b.sync("origin"); res.Merge.Status != gitstate.MergeFastForward {
		t.Fatalf("B: %+v", res)
	}
	ma, _ := a.ok("alice", "mail_send", `{"to":"alice","subject":"a","body":"a"}`)
	mb, _ := b.ok("alice", "mail_send", `{"to":"alice","subject":"b","body":"b"}`)
	a.sync("origin")
	if res := b.sync("origin"); res.Merge.Status != gitstate.MergeMerged {
		t.Fatalf("B: %+v", res)
	}
	a.sync("origin")
	sameTrees(t, a, b)
	for _, cl := range []*clone{a, b} {
		recs := cl.records()
		for _, m := range []map[string]any{ma, mb} {
			if !recs[mailRecord("alice", m["mail_id"].(string))] {
				t.Errorf("%s lacks %s", cl.name, m["mail_id"])
			}
		}
	}
	if r := gitstatetest.Git(t, remote, "rev-parse", gitstate.RefState); r != a.tip() {
		t.Errorf("remote at %s, A at %s", r, a.tip())
	}
}

// gitDaemon returns the path of git's daemon program, or skips the test if
// git has none (some distributions ship it in a package of its own).
func gitDaemon(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skipf("git --exec-path: %v", err)
	}
	bin := filepath.Join(strings.TrimSpace(string(out)), "git-daemon")
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("git daemon is not available: %v", err)
	}
	return bin
}

// startGitDaemon serves every repository under base on a free port of
// 127.0.0.1, with pushes allowed, until the test ends; it returns the
// git:// URL of base. The daemon runs in a process group of its own, which
// the cleanup kills with the children it forked for connections.
func startGitDaemon(t testing.TB, base string) string {
	t.Helper()
	bin := gitDaemon(t)
	port := freePort(t)
	cmd := exec.Command(bin, "--export-all", "--enable=receive-pack", "--base-path="+base,
		"--listen=127.0.0.1", "--port="+port, "--reuseaddr", base)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("git daemon: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second)
		if err == nil {
			conn.Close()
			break
		}
		select {
		case <-exited:
			t.Fatalf("git daemon exited: %s", stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("git daemon did not listen on %s: %v\n%s", port, err, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "git://127.0.0.1:" + port
}

// TestSyncRefusesInvalidRemoteState: a remote whose state holds a record
// the tools could not read (here a mail filed in someone else's inbox, and
// a config that is not JSON) is refused as a whole with
// INVALID_REMOTE_STATE, in all three cases of a merge (adopt, fast-forward,
// merge), and nothing local changes.
func TestSyncRefusesInvalidRemoteState(t *testing.T) {
	remote := newBareRemote(t)
	a := newClone(t, "A", remote)
	a.init()
	a.ok(human, "agent_register", `{"id":"alice","type":"worker"}`)
	a.sync("origin")
	b := newClone(t, "B", remote)
	b.sync("origin")

	// A forges a commit by hand: a mail to bob stored in alice's inbox.
	_, err := a.st.Update(context.Background(), func(tx *gitstate.Tx) error {
		tx.SetMeta(gitstate.Meta{Summary: "forged", Trailers: []gitstate.Trailer{{Key: gitstate.TrailerTool, Value: "forge"}}})
		m := mail.Mail{ID: "m-0000000000abcdef", From: "x", To: "bob", Subject: "s", Body: "b"}
		return tx.Put("mail/alice/e/f/m-0000000000abcdef.json", m)
	})
	if err != nil {
		t.Fatal(err)
	}
	a.git("push", "-q", "origin", gitstate.RefState)

	fresh := newClone(t, "C", remote)
	for _, c := range []*clone{b, fresh} { // fast-forward, adopt
		tip := c.git("for-each-ref", gitstate.RefState)
		_, err := builtin.Registry().Sync(context.Background(), c.st, tools.Origin{ID: human}, "origin", true, nil)
		if e := tools.AsError(err); err == nil || e.Code != tools.InvalidRemoteState || !strings.Contains(e.Message, "mail/alice/e/f/m-0000000000abcdef.json") {
			t.Fatalf("%s: sync of a forged state: %v, want INVALID_REMOTE_STATE naming the record", c.name, err)
		}
		if got := c.git("for-each-ref", gitstate.RefState); got != tip {
			t.Fatalf("%s: refused sync moved the state: %q -> %q", c.name, tip, got)
		}
	}
	// and when both moved on: a real merge is refused too
	b.ok(human, "log_decision", `{"title":"t","body":"b"}`)
	tip := b.tip()
	if _, err := builtin.Registry().Sync(context.Background(), b.st, tools.Origin{ID: human}, "origin", true, nil); tools.AsError(err).Code != tools.InvalidRemoteState {
		t.Fatalf("merge with a forged state: %v", err)
	}
	if b.tip() != tip {
		t.Fatal("refused merge moved the state")
	}
}

func TestValidateRecord(t *testing.T) {
	tests := []struct {
		path, data string
		ok         bool
	}{
		{"config/config.json", `{"entries":{}}`, true},
		{"config/config.json", `{"entries":`, false},
		{"agents/alice.json", `{"id":"alice","type":"worker"}`, true},
		{"agents/alice.json", `{"id":"bob","type":"worker"}`, false},
		{"agents/alice.json", `{"id":"alice","type":"wizard"}`, false},
		{"mail/bob/e/f/m-0000000000abcdef.json", `{"id":"m-0000000000abcdef","to":"bob"}`, true},
		{"mail/bob/e/f/m-0000000000abcdef.json", `{"id":"m-0000000000abcdef","to":"eve"}`, false},
		{"mail/bob/x/x/m-0000000000abcdef.json", `{"id":"m-0000000000abcdef","to":"bob"}`, false},
		{"decisions/e/f/d-0000000000abcdef.json", `{"id":"d-0000000000abcdef"}`, true},
		{"decisions/e/f/d-0000000000abcdef.json", `{"id":"d-1"}`, false},
		{"tasks/e/f/t-0000000000abcdef.json", `{"id":"t-0000000000abcdef","state":"PENDING","claim":null}`, true},
		{"tasks/e/f/t-0000000000abcdef.json", `{"id":"t-0000000000abcdef","state":"IN_PROGRESS","claim":{"holder":"w1","clock":3}}`, true},
		{"tasks/e/f/t-0000000000abcdef.json", `{"id":"t-0000000000abcdef","state":"DONE","claim":null}`, false},
		{"tasks/t-0000000000abcdef.json", `{"id":"t-0000000000abcdef","state":"PENDING","claim":null}`, false},
		{lockFile("db"), `{"name":"db"}}`, false},
		{"tasks/e/f/t-0000000000abcdef.json", `{"id":"t-0000000000abcdef","claim":{"holder":"../../x","clock":3}}`, false},
		{"tasks/e/f/t-0000000000abcdef.json", `{"id":"t-0000000000abcde","claim":null}`, false},
		{"tasks/x/y/t-0000000000abcdef.json", `{"id":"t-0000000000abcdef","claim":null}`, false},
		{lockFile("db"), `{"name":"db","claim":{"holder":"human:a@b.c","clock":1}}`, true},
		{lockFile("db"), `{"name":"other","claim":null}`, false},
		{lockFile("db"), `{"name":"db","claim":{"holder":"a/b","clock":1}}`, false},
		{"reviews/active/c1.json", `{"coder":"c1","claim":{"holder":"r1","clock":2}}`, true},
		{"reviews/active/c1.json", `{"coder":"c2","claim":null}`, false},
		{"conflicts/e/f/c-0000000000abcdef.json", `{"id":"c-0000000000abcdef","kind":"lock","record":"locks/a/b/x.json","winner":{"holder":"w1"},"loser":{"holder":"w2"}}`, true},
		{"conflicts/e/f/c-0000000000abcdef.json", `{"id":"c-0000000000abcdef","kind":"lock","record":"agents/w1.json","winner":{"holder":"w1"},"loser":{"holder":"w2"}}`, false},
		{"conflicts/e/f/c-0000000000abcdef.json", `{"id":"c-0000000000abcdef","kind":"lock","record":"locks/a/b/x.json","winner":{"holder":"w1"},"loser":{"holder":"../x"}}`, false},
		{"conflicts/e/f/c-0000000000abcdef.json", `{"id":"c-1"}`, false},
		{"future/kind.json", `{"anything":1}`, true},
		{"future/kind.json", `nope`, false},
	}
	for _, tt := range tests {
		err := builtin.Registry().Kinds().ValidateRecord(tt.path, []byte(tt.data))
		if (err == nil) != tt.ok {
			t.Errorf("ValidateRecord(%s, %s) = %v, want ok=%v", tt.path, tt.data, err, tt.ok)
		}
	}
}

// TestConcurrentSyncsOfOneRepository: four syncs of one repository at
// once (as from four agents' servers), with plain `git fetch`es of the same
// refs running too: all succeed (syncs take turns; a fetch that loses the
// tracking ref's lock to a plain fetch tries again), nothing is lost, and
// the clones converge.
func TestConcurrentSyncsOfOneRepository(t *testing.T) {
	remote := newBareRemote(t)
	a, b := newClone(t, "A", remote), newClone(t, "B", remote)
	a.init()
	a.ok(human, "agent_register", `{"id":"w1","type":"worker"}`)
	if err := a.st.ConfigureRemote(context.Background(), "origin"); err != nil {
		t.Fatal(err)
	}
	a.sync("origin")
	b.sync("origin")
	for i := 0; i < 3; i++ {
		a.ok("w1", "mail_send", fmt.Sprintf(`{"to":"w1","subject":"a%d","body":"x"}`, i))
		b.ok("w1", "mail_send", fmt.Sprintf(`{"to":"w1","subject":"b%d","body":"x"}`, i))
	}
	b.sync("origin")
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := gitstate.Open(a.dir, gitstate.Options{})
			if err != nil {
				errs <- err
				return
			}
			defer st.Close()
			if _, err := builtin.Registry().Sync(context.Background(), st, tools.Origin{ID: human}, "origin", true, nil); err != nil {
				errs <- fmt.Errorf("sync: %w", err)
			}
		}()
	}
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := gitstatetest.GitErr(a.dir, "fetch", "-q", "origin"); err != nil && !strings.Contains(string(out), "cannot lock ref") {
				errs <- fmt.Errorf("git fetch: %v: %s", err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	b.sync("origin")
	sameTrees(t, a, b)
	inbox, _ := a.ok("w1", "mail_list_inbox", `{}`)
	if n := inbox["count"].(float64); n != 6 {
		t.Errorf("w1 has %v unread mails after the syncs, want all 6", n)
	}
}

package builtin_test

// Sync against a hostile peer: a bare remote whose refs were written with
// plain git plumbing (`git hash-object --literally`, `git commit-tree`,
// `git update-ref`), the way someone with push access and no git codex
// could write them. Each test reproduces an attack of issue 16.

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
)

// peer is a remote with git codex state (two agents, three mails and a
// decision, written by clone A) and a clone B that has synced it.
type peer struct {
	remote string
	a, b   *clone
}

func newPeer(t *testing.T) *peer {
	t.Helper()
	remote := newBareRemote(t)
	a := newClone(t, "A", remote)
	a.init()
	a.ok(human, "agent_register", `{"id":"alice","type":"worker"}`)
	a.ok(human, "agent_register", `{"id":"bob","type":"worker"}`)
	for i := 0; i < 3; i++ {
		a.ok("alice", "mail_send", fmt.Sprintf(`{"to":"bob","subject":"s%d","body":"b"}`, i))
	}
	a.ok("alice", "log_decision", `{"title":"t","body":"b"}`)
	a.sync("origin")
	b := newClone(t, "B", remote)
	b.sync("origin")
	return &peer{remote: remote, a: a, b: b}
}

// root lists the remote's state tree.
func (p *peer) root(t *testing.T) []gitstatetest.TreeEntry {
	return gitstatetest.ReadTree(t, p.remote, gitstate.RefState)
}

// clock is the Codex-Clock of the remote's state.
func (p *peer) clock(t *testing.T) uint64 {
	v := gitstatetest.Git(t, p.remote, "log", "-1", "--format=%(trailers:key=Codex-Clock,valueonly)", gitstate.RefState)
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// forge moves the remote's state to a commit of tree on top of its tip,
// with the given clock (0: one more than the tip's).
func (p *peer) forge(t *testing.T, tree string, clock uint64) string {
	t.Helper()
	if clock == 0 {
		clock = p.clock(t) + 1
	}
	tip := gitstatetest.Git(t, p.remote, "rev-parse", gitstate.RefState)
	c := gitstatetest.CommitTree(t, p.remote, tree, fmt.Sprintf("forged\n\nCodex-Tool: forge\nCodex-Clock: %d", clock), tip)
	gitstatetest.Git(t, p.remote, "update-ref", gitstate.RefState, c)
	return c
}

func (p *peer) tree(t *testing.T, entries ...gitstatetest.TreeEntry) string {
	return gitstatetest.WriteTree(t, p.remote, entries)
}

func (p *peer) blob(t *testing.T, data []byte) string {
	return gitstatetest.WriteObject(t, p.remote, "blob", data)
}

// refused checks that c's sync fails with INVALID_REMOTE_STATE naming what,
// and that nothing local moved.
func refused(t *testing.T, c *clone, what string) {
	t.Helper()
	before := c.git("for-each-ref", "refs/codex/state", "refs/notes/")
	_, err := builtin.Registry().Sync(context.Background(), c.st, tools.Origin{ID: human}, "origin", true, nil)
	if e := tools.AsError(err); err == nil || e.Code != tools.InvalidRemoteState || !strings.Contains(e.Message, what) {
		t.Fatalf("%s: sync: %v; want INVALID_REMOTE_STATE naming %q", c.name, err, what)
	}
	if after := c.git("for-each-ref", "refs/codex/state", "refs/notes/"); after != before {
		t.Fatalf("%s: a refused sync moved local refs:\n%s\n->\n%s", c.name, before, after)
	}
}

func entry(entries []gitstatetest.TreeEntry, name string) gitstatetest.TreeEntry {
	for _, e := range entries {
		if e.Name == name {
			return e
		}
	}
	panic("no " + name)
}

// TestSyncRefusesMalformedTrees: issue 16, item 1. A remote state whose
// tree breaks git's rules (a name twice, unsorted, a name with a slash,
// "..", ".git", a mode git codex never writes) or git codex's layout (a
// 60 MB file where no record lives, a record where a directory belongs) is
// refused whole with INVALID_REMOTE_STATE naming the path, whether it
// would be adopted, fast-forwarded or merged, and nothing local changes.
func TestSyncRefusesMalformedTrees(t *testing.T) {
	tests := []struct {
		name string
		what string // the path the error names (or git's fsck message id: git checks what it fetches, issue 29 item 11)
		root func(t *testing.T, p *peer, root []gitstatetest.TreeEntry) []gitstatetest.TreeEntry
	}{
		{"mail twice", "duplicateEntries", func(t *testing.T, p *peer, root []gitstatetest.TreeEntry) []gitstatetest.TreeEntry {
			return append(root, gitstatetest.TreeEntry{Mode: "40000", Name: "mail", Hash: p.tree(t)})
		}},
		{"unsorted", "treeNotSorted", func(t *testing.T, p *peer, root []gitstatetest.TreeEntry) []gitstatetest.TreeEntry {
			out := []gitstatetest.TreeEntry{entry(root, "mail")}
			for _, e := range root {
				if e.Name != "mail" {
					out = append(out, e)
				}
			}
			return out
		}},
		{"slash in a name", "fullPathname", func(t *testing.T, p *peer, root []gitstatetest.TreeEntry) []gitstatetest.TreeEntry {
			mallory := p.blob(t, []byte(`{"id":"mallory","type":"supervisor"}`))
			return append(root, gitstatetest.TreeEntry{Mode: "100644", Name: "agents/mallory.json", Hash: mallory})
		}},
		{"dot dot", "..", func(t *testing.T, p *peer, root []gitstatetest.TreeEntry) []gitstatetest.TreeEntry {
			return append([]gitstatetest.TreeEntry{{Mode: "40000", Name: "..", Hash: entry(root, "agents").Hash}}, root...)
		}},
		{"dot git", ".git", func(t *testing.T, p *peer, root []gitstatetest.TreeEntry) []gitstatetest.TreeEntry {
			hooks := p.tree(t, gitstatetest.TreeEntry{Mode: "100644", Name: "post-checkout", Hash: p.blob(t, []byte("{}"))})
			return append([]gitstatetest.TreeEntry{{Mode: "40000", Name: ".git", Hash: p.tree(t, gitstatetest.TreeEntry{Mode: "40000", Name: "hooks", Hash: hooks})}}, root...)
		}},
		{"symlink", "link", func(t *testing.T, p *peer, root []gitstatetest.TreeEntry) []gitstatetest.TreeEntry {
			return gitOrder(append(root, gitstatetest.TreeEntry{Mode: "120000", Name: "link", Hash: p.blob(t, []byte(`"/etc/passwd"`))}))
		}},
		{"60 MB at an unknown path", "future/big.bin", func(t *testing.T, p *peer, root []gitstatetest.TreeEntry) []gitstatetest.TreeEntry {
			big := p.blob(t, append(append([]byte(`"`), bytes.Repeat([]byte{'x'}, 60<<20)...), '"')) // valid JSON
			return gitOrder(append(root, gitstatetest.TreeEntry{Mode: "40000", Name: "future", Hash: p.tree(t, gitstatetest.TreeEntry{Mode: "100644", Name: "big.bin", Hash: big})}))
		}},
		{"a byte too many at an unknown path", "future/big.bin", func(t *testing.T, p *peer, root []gitstatetest.TreeEntry) []gitstatetest.TreeEntry {
			big := p.blob(t, append(append([]byte(`"`), bytes.Repeat([]byte{'x'}, gitstate.DefaultMaxOther-1)...), '"'))
			return gitOrder(append(root, gitstatetest.TreeEntry{Mode: "40000", Name: "future", Hash: p.tree(t, gitstatetest.TreeEntry{Mode: "100644", Name: "big.bin", Hash: big})}))
		}},
		{"record in place of a fan-out directory", "decisions/x.json", func(t *testing.T, p *peer, root []gitstatetest.TreeEntry) []gitstatetest.TreeEntry {
			dec := gitstatetest.ReadTree(t, p.remote, entry(root, "decisions").Hash)
			dec = gitOrder(append(dec, gitstatetest.TreeEntry{Mode: "100644", Name: "x.json", Hash: p.blob(t, []byte(`{}`))}))
			out := []gitstatetest.TreeEntry{}
			for _, e := range root {
				if e.Name == "decisions" {
					e.Hash = p.tree(t, dec...)
				}
				out = append(out, e)
			}
			return out
		}},
	}
	p := newPeer(t)
	d := newClone(t, "D", p.remote) // has a change of its own: merges
	d.sync("origin")
	d.ok("alice", "mail_send", `{"to":"bob","subject":"local","body":"b"}`)
	good := gitstatetest.Git(t, p.remote, "rev-parse", gitstate.RefState)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gitstatetest.Git(t, p.remote, "update-ref", gitstate.RefState, good)
			tip := p.forge(t, p.tree(t, tt.root(t, p, p.root(t))...), 0)
			refused(t, p.b, tt.what) // fast-forward
			fsckAfterRefusal(t, p.b, tip)
			if strings.HasPrefix(tt.name, "60 MB") {
				return // as the case below, which costs less to fetch
			}
			c := newClone(t, "C", p.remote)
			refused(t, c, tt.what) // adopt
			refused(t, d, tt.what) // merge
			fsckAfterRefusal(t, c, tip)
			fsckAfterRefusal(t, d, tip)
		})
	}
	if got := len(strings.Fields(d.git("ls-tree", "-r", "--name-only", gitstate.RefState, "mail/"))); got != 4 {
		t.Fatalf("D has %d mails after the refused syncs, want 4", got)
	}
	// the remote's owner puts its state back: syncs work again
	gitstatetest.Git(t, p.remote, "update-ref", gitstate.RefState, good)
	d.sync("origin")
	p.b.sync("origin")
	sameTrees(t, p.b, d)
}

// gitOrder sorts tree entries as git does (a directory as if its name
// ended in "/"), for forged trees that should be well-formed but for one
// thing.
func gitOrder(entries []gitstatetest.TreeEntry) []gitstatetest.TreeEntry {
	key := func(e gitstatetest.TreeEntry) string {
		if e.Mode == "40000" {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.SliceStable(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
	return entries
}

// TestSyncKeepsRecordsAPeerDeleted: issue 16, item 2. A well-formed remote
// state that simply drops mail/ (or is an empty tree) is not adopted as is:
// the sync merges, keeping every record no tool deletes, and pushes that
// merge, so the records come back on the remote too.
func TestSyncKeepsRecordsAPeerDeleted(t *testing.T) {
	for _, tt := range []struct {
		name string
		root func(t *testing.T, p *peer) string
	}{
		{"without mail", func(t *testing.T, p *peer) string {
			var out []gitstatetest.TreeEntry
			for _, e := range p.root(t) {
				if e.Name != "mail" {
					out = append(out, e)
				}
			}
			return p.tree(t, out...)
		}},
		{"empty tree", func(t *testing.T, p *peer) string { return p.tree(t) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := newPeer(t)
			want := p.b.records()
			forged := p.forge(t, tt.root(t, p), 0)
			res := p.b.sync("origin")
			if res.Merge.Status != gitstate.MergeMerged || !res.Pushed {
				t.Fatalf("sync: %+v; want a merge that keeps the records, pushed", res)
			}
			if got := p.b.records(); !equalStrings(keys(got), keys(want)) {
				t.Fatalf("B's records after the sync:\n%v\nwant\n%v", keys(got), keys(want))
			}
			if s := p.b.git("log", "-1", "--format=%s", gitstate.RefState); !strings.Contains(s, "kept that one side deleted") {
				t.Errorf("the merge's summary does not count the kept records: %q", s)
			}
			if parents := p.b.git("log", "-1", "--format=%P", gitstate.RefState); !strings.Contains(parents, forged) {
				t.Fatalf("the merge's parents %s do not include the peer's commit %s", parents, forged)
			}
			if r := gitstatetest.Git(t, p.remote, "rev-parse", gitstate.RefState); r != p.b.tip() {
				t.Fatalf("remote at %s, B at %s", r, p.b.tip())
			}
			p.a.sync("origin")
			sameTrees(t, p.a, p.b)
		})
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		if k != "" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// TestSyncRefusesMalformedNotes: issue 16, item 3. A blob at the remote's
// refs/notes/codex, or a notes tree git could not read, is refused with
// INVALID_REMOTE_STATE: the local notes stay as they were and readable, and
// once the remote's notes ref is fixed, the next sync goes through.
func TestSyncRefusesMalformedNotes(t *testing.T) {
	for _, tt := range []struct {
		name  string
		what  string // named in the refusal (git's fsck message id when git refuses the fetch)
		notes func(t *testing.T, p *peer) string
	}{
		{"blob", "refs/notes/codex", func(t *testing.T, p *peer) string { return p.blob(t, []byte("not notes")) }},
		{"name twice", "duplicateEntries", func(t *testing.T, p *peer) string {
			head := gitstatetest.Git(t, p.remote, "rev-parse", gitstate.RefState)
			n := p.blob(t, []byte("note\n"))
			tree := p.tree(t, gitstatetest.TreeEntry{Mode: "100644", Name: head, Hash: n}, gitstatetest.TreeEntry{Mode: "100644", Name: head, Hash: n})
			return gitstatetest.CommitTree(t, p.remote, tree, "Notes added by 'git notes add'")
		}},
		{"not a note", "hasDotdot", func(t *testing.T, p *peer) string {
			tree := p.tree(t, gitstatetest.TreeEntry{Mode: "40000", Name: "..", Hash: p.tree(t, gitstatetest.TreeEntry{Mode: "100644", Name: "x", Hash: p.blob(t, []byte("x"))})})
			return gitstatetest.CommitTree(t, p.remote, tree, "Notes added by 'git notes add'")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := newPeer(t)
			head := p.b.tip()
			p.b.git("notes", "--ref", "codex", "add", "-m", "local note", head)
			notes := p.b.git("rev-parse", "refs/notes/codex")
			gitstatetest.Git(t, p.remote, "update-ref", "refs/notes/codex", tt.notes(t, p))
			refused(t, p.b, tt.what)
			refused(t, p.b, tt.what) // and again: nothing was left half done
			if got := p.b.git("notes", "--ref", "codex", "show", head); got != "local note" {
				t.Fatalf("local notes after the refusal: %q", got)
			}
			// the remote's owner removes the bad ref: syncs work again
			gitstatetest.Git(t, p.remote, "update-ref", "-d", "refs/notes/codex")
			p.b.sync("origin")
			if got := gitstatetest.Git(t, p.remote, "rev-parse", "refs/notes/codex"); got != notes {
				t.Fatalf("remote notes %s, want B's %s", got, notes)
			}
		})
	}
}

// TestSyncRefusesPinnedClock: issue 16, item 4. A peer commit whose
// Codex-Clock is far ahead of anything its history could have counted to
// (here the largest uint64) is refused, and the local clock keeps counting.
// A huge clock hidden in the middle of the peer's history cannot pin the
// clock of a later merge either.
func TestSyncRefusesPinnedClock(t *testing.T) {
	p := newPeer(t)
	p.forge(t, gitstatetest.Git(t, p.remote, "rev-parse", gitstate.RefState+"^{tree}"), 18446744073709551615)
	refused(t, p.b, "18446744073709551615")
	fresh := newClone(t, "C", p.remote)
	refused(t, fresh, "18446744073709551615")

	// the huge clock one commit deep, the tip's clock plausible again
	q := newPeer(t)
	c := q.clock(t)
	tree := gitstatetest.Git(t, q.remote, "rev-parse", gitstate.RefState+"^{tree}")
	q.forge(t, tree, 18446744073709551615)
	q.forge(t, tree, c+2)
	q.b.ok("alice", "mail_send", `{"to":"bob","subject":"local","body":"b"}`)
	res := q.b.sync("origin")
	if res.Merge.Status != gitstate.MergeMerged {
		t.Fatalf("sync: %+v", res)
	}
	_, commit := q.b.ok("alice", "mail_send", `{"to":"bob","subject":"after","body":"b"}`)
	v := q.b.git("log", "-1", "--format=%(trailers:key=Codex-Clock,valueonly)", commit)
	if n, _ := strconv.ParseUint(v, 10, 64); n > c+10 {
		t.Fatalf("clock after syncing with the peer: %d, want it near %d", n, c)
	}
}

// TestSyncBusyPeer: issue 16, item 5. While clone A writes and syncs in a
// loop, every sync of clone B succeeds: B retries with backoff and jitter
// within its time budget, says on its progress stream that it is retrying,
// and once rejected it says on the remote that it is waiting, so A lets it
// go first (before, 8 of 8 syncs gave up; backoff alone still lost 12 of
// 12 rounds to a peer whose cycle is shorter than a merge round). No
// waiting ref is left behind.
func TestSyncBusyPeer(t *testing.T) {
	if testing.Short() {
		t.Skip("a busy peer for several seconds")
	}
	p := newPeer(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var pushes atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			p.a.call("alice", "mail_send", fmt.Sprintf(`{"to":"bob","subject":"busy %d","body":"b"}`, i))
			if _, err := builtin.Registry().Sync(ctx, p.a.st, tools.Origin{ID: human}, "origin", true, nil); err != nil && ctx.Err() == nil {
				t.Errorf("the busy peer's sync: %v", err)
			}
			pushes.Add(1)
		}
	}()
	defer func() { cancel(); wg.Wait() }()
	for pushes.Load() < 2 { // the peer is busy: it has synced, and goes on
		time.Sleep(50 * time.Millisecond)
	}
	before := pushes.Load()
	var progress bytes.Buffer
	retried := false
	for i := 0; i < 4; i++ {
		p.b.ok("alice", "mail_send", fmt.Sprintf(`{"to":"bob","subject":"from B %d","body":"b"}`, i))
		start := time.Now()
		progress.Reset()
		res, err := builtin.Registry().Sync(context.Background(), p.b.st, tools.Origin{ID: human}, "origin", true, &progress)
		if err != nil {
			t.Fatalf("sync %d of B beside a busy peer (after %v): %v", i, time.Since(start), err)
		}
		if res.Attempts > 1 {
			retried = true
			if !strings.Contains(progress.String(), "trying again") {
				t.Errorf("sync %d took %d attempts and said nothing about it: %q", i, res.Attempts, progress.String())
			}
		}
	}
	t.Logf("the busy peer synced %d times meanwhile", pushes.Load()-before)
	cancel()
	wg.Wait()
	if left := gitstatetest.Git(t, p.remote, "for-each-ref", "refs/codex/waiting/"); left != "" {
		t.Errorf("waiting refs left on the remote:\n%s", left)
	}
	if !retried {
		t.Log("no sync of B had to retry: the peer was not busy enough to test the backoff")
	}
}

// forgeRaw moves the remote's state to a commit written byte for byte:
// the state's tree, parent the tip, by author, with message.
func (p *peer) forgeRaw(t *testing.T, author, message string) string {
	t.Helper()
	tree := gitstatetest.Git(t, p.remote, "rev-parse", gitstate.RefState+"^{tree}")
	tip := gitstatetest.Git(t, p.remote, "rev-parse", gitstate.RefState)
	raw := fmt.Sprintf("tree %s\nparent %s\nauthor %s 1767225600 +0000\ncommitter git codex <git-codex@invalid> 1767225600 +0000\n\n%s", tree, tip, author, message)
	c := gitstatetest.WriteObject(t, p.remote, "commit", []byte(raw))
	gitstatetest.Git(t, p.remote, "update-ref", gitstate.RefState, c)
	return c
}

// fsckAfterRefusal checks issue 29 item 11 for c: after a refused sync,
// git fsck (with the checks a remote applies) finds nothing wrong, and the
// remote-tracking ref does not name the refused state.
func fsckAfterRefusal(t *testing.T, c *clone, refusedTip string) {
	t.Helper()
	fsckClean(t, c.dir)
	if got := c.git("for-each-ref", "--format=%(objectname)", gitstate.RemoteStateRef("origin")); got == refusedTip {
		t.Errorf("%s: the refused state is still at %s", c.name, gitstate.RemoteStateRef("origin"))
	}
}

// TestSyncRefusesMalformedCommits is issue 29 item 10: only trees and the
// tip's clock were checked, so a peer's commit with a NUL in its message
// was fast-forwarded (and every later push to a remote with
// receive.fsckObjects failed), and a Codex-Clock that is not a number
// ("abc", -5) was fast-forwarded and the next local write restarted the
// clock at 1. Every incoming commit is checked, buried ones too, whether
// the state would be adopted, fast-forwarded or merged; nothing local
// changes, and (item 11) nothing of it stays behind for git fsck to fail on.
func TestSyncRefusesMalformedCommits(t *testing.T) {
	const mallory = "Mallory <mallory@example.com>"
	tests := []struct {
		name, what string
		forge      func(t *testing.T, p *peer, clock uint64)
	}{
		{"NUL in the message", "nulInCommit", func(t *testing.T, p *peer, clock uint64) {
			p.forgeRaw(t, mallory, fmt.Sprintf("forged\x00hidden\n\nCodex-Tool: forge\nCodex-Clock: %d\n", clock))
		}},
		{"clock abc", `Codex-Clock "abc" is not a clock`, func(t *testing.T, p *peer, clock uint64) {
			p.forgeRaw(t, mallory, "forged\n\nCodex-Tool: forge\nCodex-Clock: abc\n")
		}},
		{"clock -5", `Codex-Clock "-5" is not a clock`, func(t *testing.T, p *peer, clock uint64) {
			p.forgeRaw(t, mallory, "forged\n\nCodex-Tool: forge\nCodex-Clock: -5\n")
		}},
		{"no clock", "0 Codex-Clock trailers", func(t *testing.T, p *peer, clock uint64) {
			p.forgeRaw(t, mallory, "forged\n\nCodex-Tool: forge\n")
		}},
		{"two clocks", "2 Codex-Clock trailers", func(t *testing.T, p *peer, clock uint64) {
			p.forgeRaw(t, mallory, fmt.Sprintf("forged\n\nCodex-Tool: forge\nCodex-Clock: %d\nCodex-Clock: %d\n", clock, clock))
		}},
		{"no tool", "names no tool", func(t *testing.T, p *peer, clock uint64) {
			p.forgeRaw(t, mallory, fmt.Sprintf("forged\n\nCodex-Clock: %d\n", clock))
		}},
		{"escape sequence", "control character U+001B", func(t *testing.T, p *peer, clock uint64) {
			p.forgeRaw(t, mallory, fmt.Sprintf("forged \x1b[2Jclear\n\nCodex-Tool: forge\nCodex-Clock: %d\n", clock))
		}},
		{"author not a caller", `author "Mallory Evil" is not a caller id`, func(t *testing.T, p *peer, clock uint64) {
			p.forgeRaw(t, "Mallory Evil <mallory@example.com>", fmt.Sprintf("forged\n\nCodex-Tool: forge\nCodex-Clock: %d\n", clock))
		}},
		{"buried under a good commit", `Codex-Clock "abc" is not a clock`, func(t *testing.T, p *peer, clock uint64) {
			p.forgeRaw(t, mallory, "forged\n\nCodex-Tool: forge\nCodex-Clock: abc\n")
			p.forgeRaw(t, mallory, fmt.Sprintf("good\n\nCodex-Tool: forge\nCodex-Clock: %d\n", clock+1))
		}},
	}
	p := newPeer(t)
	d := newClone(t, "D", p.remote) // has a change of its own: merges
	d.sync("origin")
	d.ok("alice", "mail_send", `{"to":"bob","subject":"local","body":"b"}`)
	good := gitstatetest.Git(t, p.remote, "rev-parse", gitstate.RefState)
	clock := p.clock(t) + 1
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gitstatetest.Git(t, p.remote, "update-ref", gitstate.RefState, good)
			tt.forge(t, p, clock)
			tip := gitstatetest.Git(t, p.remote, "rev-parse", gitstate.RefState)
			fresh := newClone(t, "C", p.remote)
			for _, c := range []*clone{p.b, fresh, d} { // fast-forward, adopt, merge
				refused(t, c, tt.what)
				fsckAfterRefusal(t, c, tip)
			}
		})
	}
	// the remote's owner puts its state back: syncs work again, and the
	// clock counts on from where it was
	gitstatetest.Git(t, p.remote, "update-ref", gitstate.RefState, good)
	d.sync("origin")
	p.b.sync("origin")
	sameTrees(t, p.b, d)
	_, commit := p.b.ok("alice", "mail_send", `{"to":"bob","subject":"after","body":"b"}`)
	v := p.b.git("log", "-1", "--format=%(trailers:key=Codex-Clock,valueonly)", commit)
	if n, _ := strconv.ParseUint(v, 10, 64); n < clock {
		t.Fatalf("clock after the refusals: %d, want at least %d", n, clock)
	}
	fsckClean(t, p.b.dir)
	fsckClean(t, d.dir)
}

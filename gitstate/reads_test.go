package gitstate_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// openReadsLocal is openInit with a clock of the test's (nil: the real
// one), in a repository with the default: reads and refusals on the
// machine's reads ref; onState (codex.reads=state) commits them on the
// state instead.
func openReadsLocal(t *testing.T, now func() time.Time) (*gitstate.Store, string) {
	t.Helper()
	return openReads(t, now, false)
}

func openReads(t *testing.T, now func() time.Time, onState bool) (*gitstate.Store, string) {
	t.Helper()
	dir := gitstatetest.NewRepo(t)
	if onState {
		gitstatetest.ReadsOnState(t, dir)
	}
	return openInitIn(t, dir, gitstate.Options{Now: now}), dir
}

// A transaction that changes nothing (a read; a refusal, whose writes were
// discarded) is committed on refs/codex/reads/<machine>/<day>, with the
// state's tree and the state commit it read; the state does not move. A
// transaction that writes goes to the state.
func TestReadsGoToTheMachinesReadsRef(t *testing.T) {
	ctx := context.Background()
	day := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	now := day
	s, dir := openReadsLocal(t, func() time.Time { now = now.Add(time.Second); return now })
	tip := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)
	tree := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState+"^{tree}")

	read, err := s.Update(ctx, func(tx *gitstate.Tx) error {
		var r rec
		if err := tx.Get("config/version.json", &r); err != nil {
			return err
		}
		tx.SetMeta(meta("look"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	machine, err := s.Machine()
	if err != nil || machine == "" {
		t.Fatalf("machine id %q: %v", machine, err)
	}
	want := gitstate.ReadsPrefix + machine + "/2026-03-04"
	if read.Ref != want {
		t.Fatalf("read went to %q, want %q", read.Ref, want)
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState); got != tip {
		t.Errorf("the state moved for a read: %s -> %s", tip, got)
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", want); got != read.Hash {
		t.Errorf("%s = %s, want the read's commit %s", want, got, read.Hash)
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", read.Hash+"^{tree}"); got != tree {
		t.Errorf("the read's tree %s is not the state's %s", got, tree)
	}
	msg := gitstatetest.Git(t, dir, "log", "-1", "--format=%B", read.Hash)
	if !strings.Contains(msg, "Codex-Tool: look") || !strings.Contains(msg, gitstate.TrailerReadAt+": "+tip) {
		t.Errorf("read's message lacks its record or the state it read:\n%s", msg)
	}

	// a refusal: writes discarded, the audit record kept, on the same chain
	refusal, err := s.Update(ctx, func(tx *gitstate.Tx) error {
		if err := tx.Put("mail/x/1.json", rec{N: 2}); err != nil {
			return err
		}
		tx.Discard()
		m := meta("send")
		m.Trailers = append(m.Trailers, gitstate.Trailer{Key: gitstate.TrailerError, Value: "PERMISSION_DENIED"})
		tx.SetMeta(m)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if refusal.Ref != want || refusal.Parent != read.Hash {
		t.Errorf("refusal at %s with parent %s, want %s after %s", refusal.Ref, refusal.Parent, want, read.Hash)
	}

	// a write goes to the state, whose history holds no read
	write, err := s.Update(ctx, func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("put"))
		return tx.Put("mail/x/2.json", rec{N: 3})
	})
	if err != nil {
		t.Fatal(err)
	}
	if write.Ref != gitstate.RefState || write.Parent != tip {
		t.Errorf("write at %s with parent %s, want %s after %s", write.Ref, write.Parent, gitstate.RefState, tip)
	}
	if n := gitstatetest.Git(t, dir, "rev-list", "--count", gitstate.RefState); n != "2" {
		t.Errorf("the state has %s commits, want 2 (init, put)", n)
	}

	// the next day starts a chain of its own
	now = day.Add(24 * time.Hour)
	next, err := s.Update(ctx, func(tx *gitstate.Tx) error { tx.SetMeta(meta("look")); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if next.Ref != gitstate.ReadsPrefix+machine+"/2026-03-05" || next.Parent != "" {
		t.Errorf("next day's read at %s with parent %q", next.Ref, next.Parent)
	}
	refs, err := s.ReadsRefs()
	if err != nil || len(refs) != 2 {
		t.Errorf("reads refs %v: %v", refs, err)
	}

	// Events of the state and the reads refs together: newest first, reads
	// marked as such and changing nothing
	var kinds []string
	err = s.EventsOf(ctx, append([]string{""}, refs...), func(ev gitstate.Event) bool {
		k := ev.Get(gitstate.TrailerTool)
		if ev.IsRead() {
			k += ":read"
		}
		if ev.Changed {
			k += ":changed"
		}
		kinds = append(kinds, k)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(kinds, " "), "look:read put:changed send:read look:read init:changed"; got != want {
		t.Errorf("events %q, want %q", got, want)
	}
	if ch, err := s.Changes(ctx, refusal.Hash); err != nil || len(ch) != 0 {
		t.Errorf("a read's changes: %v %v", ch, err)
	}
	if out, err := gitstatetest.GitErr(dir, "fsck", "--strict"); err != nil {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
}

// codex.reads=state keeps the design before issue 27: every call is a
// commit on the state.
func TestReadsOnStateWhenConfigured(t *testing.T) {
	ctx := context.Background()
	s, dir := openReads(t, nil, true)
	tip := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)
	c, err := s.Update(ctx, func(tx *gitstate.Tx) error { tx.SetMeta(meta("look")); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if c.Ref != gitstate.RefState || c.Parent != tip {
		t.Errorf("read at %s after %s, want %s after %s", c.Ref, c.Parent, gitstate.RefState, tip)
	}
	if refs, _ := s.ReadsRefs(); len(refs) != 0 {
		t.Errorf("reads refs %v", refs)
	}
}

// Readers and writers at once: every read lands on the reads chain and
// every write on the state, none lost (the writer lock serialises both).
func TestConcurrentReadsAndWrites(t *testing.T) {
	ctx := context.Background()
	s, dir := openReadsLocal(t, nil)
	const goroutines, each = 4, 20
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		go func(g int) {
			for i := 0; i < each; i++ {
				write := i%4 == 0
				_, err := s.Update(ctx, func(tx *gitstate.Tx) error {
					tx.SetMeta(meta("call"))
					if write {
						return tx.Put(fmt.Sprintf("mail/g%d/%d.json", g, i), rec{N: i})
					}
					return nil
				})
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}(g)
	}
	for g := 0; g < goroutines; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	writes := goroutines * each / 4
	if n := gitstatetest.Git(t, dir, "rev-list", "--count", gitstate.RefState); n != fmt.Sprint(writes+1) {
		t.Errorf("state has %s commits, want %d", n, writes+1)
	}
	if n := gitstatetest.Git(t, dir, "rev-list", "--count", "--glob=refs/codex/reads/*/*"); n != fmt.Sprint(goroutines*each-writes) {
		t.Errorf("reads refs hold %s commits, want %d", n, goroutines*each-writes)
	}
}

// MachineID makes the machine id without a lock: callers racing to make
// it (spawns and reads of processes of their own) all get the one id the
// file keeps, and a read committed afterwards goes under it.
func TestMachineIDRaceAgrees(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	const n = 16
	ids := make(chan string, n)
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() {
			s, err := gitstate.Open(dir, gitstate.Options{})
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			id, err := s.MachineID()
			if err != nil {
				errs <- err
				return
			}
			ids <- id
		}()
	}
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		select {
		case err := <-errs:
			t.Fatal(err)
		case id := <-ids:
			seen[id] = true
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, ".git", "codex", "machine"))
	if err != nil {
		t.Fatal(err)
	}
	kept := strings.TrimSpace(string(b))
	if len(seen) != 1 || !seen[kept] || len(kept) != 12 {
		t.Fatalf("racing callers got %v; the file keeps %q", seen, kept)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".git", "codex", "machine.*.tmp"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// A repository copied with `cp -r` is another machine: its instances'
// sessions and worktrees are not the original's. The copy makes an id of
// its own; the original keeps its id; a repository from before ids were
// tied to their place keeps the id it had.
func TestCopiedRepositoryIsAnotherMachine(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	idOf := func(dir string) string {
		t.Helper()
		s, err := gitstate.Open(dir, gitstate.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		id, err := s.MachineID()
		if err != nil {
			t.Fatal(err)
		}
		again, err := s.Machine()
		if err != nil || again != id {
			t.Fatalf("Machine() = %q, %v after MachineID() = %q", again, err, id)
		}
		return id
	}
	mirror := func(dir string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, ".git", "codex", "machine"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	orig := idOf(dir)
	if got := mirror(dir); got != orig {
		t.Fatalf(".git/codex/machine = %q, want %q", got, orig)
	}
	copied := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-r", dir, copied).CombinedOutput(); err != nil {
		t.Fatalf("cp -r: %v\n%s", err, out)
	}
	cp := idOf(copied)
	if cp == orig {
		t.Fatalf("the copy kept the original's machine id %s", orig)
	}
	if got := mirror(copied); got != cp {
		t.Fatalf("the copy's .git/codex/machine = %q, want its own id %q", got, cp)
	}
	if again := idOf(copied); again != cp {
		t.Fatalf("the copy's id changed: %s then %s", cp, again)
	}
	if again := idOf(dir); again != orig {
		t.Fatalf("the original's id changed: %s then %s", orig, again)
	}

	// a repository whose id predates the place files keeps it
	legacy := gitstatetest.NewRepo(t)
	if err := os.MkdirAll(filepath.Join(legacy, ".git", "codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(legacy, ".git", "codex", "machine"), []byte("0123456789ab\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := idOf(legacy); got != "0123456789ab" {
		t.Fatalf("a repository from before kept no id: got %s", got)
	}
	// and once adopted, a copy of it is another machine too
	copied = filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-r", legacy, copied).CombinedOutput(); err != nil {
		t.Fatalf("cp -r: %v\n%s", err, out)
	}
	if got := idOf(copied); got == "0123456789ab" {
		t.Fatal("a copy of an adopted repository kept its id")
	}
}

// Calls made within one second (git keeps commit times to the second)
// interleave in the order they were made when the state's history and the
// reads refs are read together: the higher clock first, and at one clock
// the reads after the change whose state they read. The heap alone put
// them in any order (log_show.txtar saw a refusal listed before the
// change it had read).
func TestEventsOfOrdersCallsOfOneSecond(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	// every call in the same second
	s, _ := openReadsLocal(t, func() time.Time { now = now.Add(time.Millisecond); return now })
	put := func(tool string) {
		t.Helper()
		if _, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(meta(tool))
			return tx.Put("agents/"+tool+".json", rec{N: 1})
		}); err != nil {
			t.Fatal(err)
		}
	}
	look := func(tool string) {
		t.Helper()
		if _, err := s.Update(ctx, func(tx *gitstate.Tx) error { tx.SetMeta(meta(tool)); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	put("c2")
	look("r2a")
	look("r2b")
	look("r2c")
	put("c3")
	put("c4")
	look("r4a")
	put("c5")
	look("r5a")
	look("r5b")
	want := "r5b r5a c5 r4a c4 c3 r2c r2b r2a c2 init"
	refs, err := s.ReadsRefs()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ { // (a heap's order of equal keys varies with what it held)
		var got []string
		if err := s.EventsOf(ctx, append([]string{""}, refs...), func(ev gitstate.Event) bool {
			got = append(got, ev.Get(gitstate.TrailerTool))
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, " ") != want {
			t.Fatalf("events %v, want %s", got, want)
		}
	}
}

package gitstate_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

type rec struct {
	N    int    `json:"n"`
	Text string `json:"text,omitempty"`
}

func meta(tool string) gitstate.Meta {
	return gitstate.Meta{Summary: tool + " summary", Trailers: []gitstate.Trailer{
		{Key: gitstate.TrailerTool, Value: tool},
		{Key: gitstate.TrailerActor, Value: "tester"},
		{Key: gitstate.TrailerResult, Value: "ok"},
	}}
}

func openInit(t *testing.T) (*gitstate.Store, string) {
	t.Helper()
	dir := gitstatetest.NewRepo(t)
	return openInitIn(t, dir, gitstate.Options{}), dir
}

// openInitIn opens a store on the repository dir with opts and writes the
// first state commit (config/version.json).
func openInitIn(t *testing.T, dir string, opts gitstate.Options) *gitstate.Store {
	t.Helper()
	s, err := gitstate.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Init(context.Background(), func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("init"))
		return tx.Put("config/version.json", rec{N: 1})
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestUpdateWritesOneCommitReadableByGit(t *testing.T) {
	ctx := context.Background()
	s, dir := openInit(t)
	c, err := s.Update(ctx, func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("put"))
		if err := tx.Put("mail/bob/ab/m-1.json", rec{N: 7, Text: "hi"}); err != nil {
			return err
		}
		var r rec
		if err := tx.Get("mail/bob/ab/m-1.json", &r); err != nil || r.N != 7 {
			t.Errorf("tx read-your-write: %v %+v", err, r)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Clock != 2 {
		t.Errorf("clock = %d, want 2", c.Clock)
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState); got != c.Hash {
		t.Errorf("ref = %s, want %s", got, c.Hash)
	}
	if got := gitstatetest.Git(t, dir, "rev-list", "--count", gitstate.RefState); got != "2" {
		t.Errorf("commits = %s, want 2", got)
	}
	body := gitstatetest.Git(t, dir, "show", gitstate.RefState+":mail/bob/ab/m-1.json")
	if !strings.Contains(body, `"text": "hi"`) {
		t.Errorf("blob = %s", body)
	}
	msg := gitstatetest.Git(t, dir, "log", "-1", "--format=%B", gitstate.RefState)
	for _, want := range []string{"put summary", "Codex-Tool: put", "Codex-Clock: 2"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if got := gitstatetest.Git(t, dir, "log", "-1", "--format=%(trailers:key=Codex-Actor,valueonly)", gitstate.RefState); got != "tester" {
		t.Errorf("git trailer parse = %q", got)
	}
	gitstatetest.Git(t, dir, "fsck", "--full", "--strict")
}

// TestInitWithoutRecordsHasTheEmptyTree: an init (or any first commit)
// that puts nothing commits git's empty tree; it named the zero hash, a
// tree no repository has, and git fsck failed on it.
func TestInitWithoutRecordsHasTheEmptyTree(t *testing.T) {
	ctx := context.Background()
	dir := gitstatetest.NewRepo(t)
	s, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.Init(ctx, func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("init"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	if c.Tree != emptyTree {
		t.Errorf("tree = %s, want the empty tree %s", c.Tree, emptyTree)
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState+"^{tree}"); got != emptyTree {
		t.Errorf("git sees tree %s, want %s", got, emptyTree)
	}
	gitstatetest.Git(t, dir, "fsck", "--full", "--strict")
	if _, err := s.Update(ctx, func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("put"))
		return tx.Put("a/b.json", rec{N: 1})
	}); err != nil {
		t.Fatal(err)
	}
	gitstatetest.Git(t, dir, "fsck", "--full", "--strict")
}

func TestDiscardCommitsAuditOnly(t *testing.T) {
	ctx := context.Background()
	s, dir := openInit(t)
	before := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState+"^{tree}")
	undone := false
	c, err := s.Update(ctx, func(tx *gitstate.Tx) error {
		tx.OnAbort(func(context.Context) error { undone = true; return nil })
		tx.Put("x/y.json", rec{N: 1})
		tx.Discard()
		tx.SetMeta(meta("refused"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !undone {
		t.Error("abort hook did not run")
	}
	after := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState+"^{tree}")
	if before != after {
		t.Errorf("tree changed on discard: %s -> %s", before, after)
	}
	// the audit commit changed nothing: it is on this machine's reads ref
	if got := gitstatetest.Git(t, dir, "rev-list", "--count", gitstate.RefState); got != "1" {
		t.Errorf("the state's commits = %s, want 1", got)
	}
	if !strings.HasPrefix(c.Ref, gitstate.ReadsPrefix) || gitstatetest.Git(t, dir, "log", "-1", "--format=%s", c.Hash) != "refused summary" {
		t.Errorf("the refusal's audit commit is %+v", c)
	}
}

func TestFailedUpdateCommitsNothing(t *testing.T) {
	ctx := context.Background()
	s, dir := openInit(t)
	tip := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)
	boom := errors.New("boom")
	undone := false
	_, err := s.Update(ctx, func(tx *gitstate.Tx) error {
		tx.OnAbort(func(context.Context) error { undone = true; return nil })
		tx.Put("a.json", rec{})
		return boom
	})
	if !errors.Is(err, boom) || !undone {
		t.Fatalf("err=%v undone=%v", err, undone)
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState); got != tip {
		t.Errorf("ref moved on failure")
	}
	_, err = s.Update(ctx, func(tx *gitstate.Tx) error { return nil })
	if !errors.Is(err, gitstate.ErrNoMeta) {
		t.Errorf("no meta: err = %v", err)
	}
}

func TestListWalkDeleteAndEmptyDirs(t *testing.T) {
	ctx := context.Background()
	s, dir := openInit(t)
	_, err := s.Update(ctx, func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("put"))
		for _, p := range []string{"m/a/1.json", "m/a/2.json", "m/b/3.json", "m/c"} {
			tx.Put(p, rec{N: len(p)})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Update(ctx, func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("del"))
		tx.Delete("m/b/3.json")
		tx.Put("m/a/0.json", rec{})
		got, err := tx.List("m")
		if err != nil {
			return err
		}
		if len(got) != 2 || got[0] != (gitstate.Entry{Name: "a", Dir: true}) || got[1] != (gitstate.Entry{Name: "c"}) {
			t.Errorf("tx.List = %+v", got)
		}
		var paths []string
		tx.Walk("m/a", func(p string, _ []byte) error { paths = append(paths, p); return nil })
		if strings.Join(paths, ",") != "m/a/0.json,m/a/1.json,m/a/2.json" {
			t.Errorf("tx.Walk = %v", paths)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := gitstatetest.Git(t, dir, "ls-tree", "--name-only", gitstate.RefState+":m"); got != "a\nc" {
		t.Errorf("ls-tree m = %q (empty dir b must vanish)", got)
	}
	err = s.View(ctx, func(sn *gitstate.Snapshot) error {
		var r rec
		if err := sn.Get("m/b/3.json", &r); !errors.Is(err, gitstate.ErrNotFound) {
			t.Errorf("deleted record: err = %v", err)
		}
		if err := sn.Get("m/a", &r); !errors.Is(err, gitstate.ErrNotFound) {
			t.Errorf("dir as record: err = %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestNotRepoNotInitialisedAndWorktree(t *testing.T) {
	ctx := context.Background()
	if _, err := gitstate.Open(t.TempDir(), gitstate.Options{}); !errors.Is(err, gitstate.ErrNotRepository) {
		t.Errorf("plain dir: err = %v", err)
	}
	dir := gitstatetest.NewRepo(t)
	s, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.View(ctx, func(*gitstate.Snapshot) error { return nil }); !errors.Is(err, gitstate.ErrNotInitialized) {
		t.Errorf("view before init: %v", err)
	}
	if _, err := s.Update(ctx, func(tx *gitstate.Tx) error { tx.SetMeta(meta("x")); return nil }); !errors.Is(err, gitstate.ErrNotInitialized) {
		t.Errorf("update before init: %v", err)
	}
	for _, p := range []string{"refs/codex", "codex"} {
		if _, err := os.Stat(filepath.Join(dir, ".git", p)); err == nil {
			t.Errorf(".git/%s created before init", p)
		}
	}
	if _, err := s.Init(ctx, func(tx *gitstate.Tx) error { tx.SetMeta(meta("init")); return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Init(ctx, func(tx *gitstate.Tx) error { tx.SetMeta(meta("init")); return nil }); !errors.Is(err, gitstate.ErrAlreadyInitialized) {
		t.Errorf("second init: %v", err)
	}
	// a linked worktree's subdirectory sees the same state.
	gitstatetest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
	wt := filepath.Join(t.TempDir(), "wt")
	gitstatetest.Git(t, dir, "worktree", "add", "-q", wt)
	os.MkdirAll(filepath.Join(wt, "sub"), 0o755)
	w, err := gitstate.Open(filepath.Join(wt, "sub"), gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	c, err := w.Update(ctx, func(tx *gitstate.Tx) error { tx.SetMeta(meta("from-wt")); return tx.Put("k.json", rec{N: 3}) })
	if err != nil {
		t.Fatal(err)
	}
	if got := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState); got != c.Hash {
		t.Errorf("worktree write not visible in main repo: %s vs %s", got, c.Hash)
	}
}

func TestSurvivesPackRefsAndGC(t *testing.T) {
	ctx := context.Background()
	s, dir := openInit(t)
	put := func(n int) {
		t.Helper()
		if _, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(meta("put"))
			return tx.Put("r/"+strings.Repeat("x", n%5+1)+".json", rec{N: n})
		}); err != nil {
			t.Fatal(err)
		}
	}
	put(1)
	gitstatetest.Git(t, dir, "pack-refs", "--all", "--prune")
	if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "codex", "state")); err == nil {
		t.Fatal("pack-refs left the loose ref")
	}
	put(2)
	gitstatetest.Git(t, dir, "gc", "--prune=now", "-q")
	put(3)
	os.Remove(filepath.Join(dir, ".git", "refs", "codex", "state"))
	put(4) // the packed value is older now: the CAS must still read the right tip
	if got := gitstatetest.Git(t, dir, "rev-list", "--count", gitstate.RefState); got != "4" {
		// gc packed the ref after put(2); deleting put(3)'s loose ref falls
		// back to that packed value, so put(4) builds on put(2).
		t.Errorf("commits after deleting the loose ref = %s, want 4", got)
	}
	gitstatetest.Git(t, dir, "fsck", "--full", "--strict")
}

// TestUndoRunsOutsideTheLock: abort hooks run after the writer lock is
// released (a hook that writes to the store itself would deadlock
// otherwise), get Update's context, and report their failures: in
// Commit.UndoErrors for a refusal that still committed, joined to the
// error of a failed Update.
func TestUndoRunsOutsideTheLock(t *testing.T) {
	type ctxKey struct{}
	ctx := context.WithValue(context.Background(), ctxKey{}, "update's")
	s, dir := openInit(t)
	undoFailed := errors.New("worktree still there")
	var gotCtx any
	c, err := s.Update(ctx, func(tx *gitstate.Tx) error {
		tx.OnAbort(func(ctx context.Context) error {
			gotCtx = ctx.Value(ctxKey{})
			_, err := s.Update(ctx, func(tx *gitstate.Tx) error {
				tx.SetMeta(meta("written by an undo step"))
				return tx.Put("undo.json", rec{N: 7})
			})
			if err != nil {
				t.Errorf("a write from the undo step: %v", err)
			}
			return undoFailed
		})
		tx.Put("x.json", rec{N: 1})
		tx.Discard()
		tx.SetMeta(meta("refused"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.UndoErrors) != 1 || !errors.Is(c.UndoErrors[0], undoFailed) {
		t.Errorf("UndoErrors = %v, want [%v]", c.UndoErrors, undoFailed)
	}
	if gotCtx != "update's" {
		t.Errorf("the hook got another context (value %v)", gotCtx)
	}
	// the refusal changed nothing (it is on the reads ref); the undo's
	// write is the state's next commit
	if got := gitstatetest.Git(t, dir, "log", "--format=%s", gitstate.RefState); !strings.HasPrefix(got, "written by an undo step summary\ninit summary") {
		t.Errorf("history = %q, want the undo's write after init", got)
	}
	if !strings.HasPrefix(c.Ref, gitstate.ReadsPrefix) || gitstatetest.Git(t, dir, "log", "-1", "--format=%s", c.Hash) != "refused summary" {
		t.Errorf("the refusal's audit commit is %+v", c)
	}
	boom := errors.New("boom")
	_, err = s.Update(ctx, func(tx *gitstate.Tx) error {
		tx.OnAbort(func(context.Context) error { return undoFailed })
		return boom
	})
	if !errors.Is(err, boom) || !errors.Is(err, undoFailed) {
		t.Errorf("err = %v, want both the failure and the undo's", err)
	}
}

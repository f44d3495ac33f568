package gitstate_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// shallowPair is a bare origin holding a state whose first commits are
// old (40 days back) and whose last are recent, and a fresh clone of it
// whose first sync fetched the last 10 days: the setting of issue 27's
// shallow first sync.
type shallowPair struct {
	origin, a, b string
	sa, sb       *gitstate.Store
	old, recent  []string // commits made on a, oldest first
	now          time.Time
}

func newShallowPair(t *testing.T) *shallowPair {
	t.Helper()
	ctx := context.Background()
	p := &shallowPair{now: time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)}
	clock := p.now.Add(-40 * 24 * time.Hour)
	p.origin = filepath.Join(t.TempDir(), "origin.git")
	gitstatetest.Git(t, filepath.Dir(p.origin), "init", "-q", "--bare", p.origin)
	p.a = gitstatetest.NewRepo(t)
	gitstatetest.Git(t, p.a, "commit", "-q", "--allow-empty", "-m", "code")
	gitstatetest.Git(t, p.a, "remote", "add", "origin", p.origin)
	gitstatetest.Git(t, p.a, "push", "-q", "origin", "HEAD:main")
	var err error
	p.sa, err = gitstate.Open(p.a, gitstate.Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.sa.Close() })
	if _, err := p.sa.Init(ctx, func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("init"))
		return tx.Put("config/version.json", rec{N: 1})
	}); err != nil {
		t.Fatal(err)
	}
	put := func(path string, n int) string {
		c, err := p.sa.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(meta("put"))
			return tx.Put(path, rec{N: n})
		})
		if err != nil {
			t.Fatal(err)
		}
		return c.Hash
	}
	for i := 1; i <= 5; i++ { // a commit every 5 days, 40 to 20 days back
		clock = clock.Add(5 * 24 * time.Hour)
		p.old = append(p.old, put("mail/x/"+strconv.Itoa(i)+".json", i))
	}
	for i := 1; i <= 3; i++ { // the last 3 days
		clock = p.now.Add(-time.Duration(4-i) * 24 * time.Hour)
		p.recent = append(p.recent, put("mail/y/"+strconv.Itoa(i)+".json", i))
	}
	if _, err := p.sa.Sync(ctx, "origin", syncOpts()); err != nil {
		t.Fatal(err)
	}
	p.b = gitstatetest.NewRepo(t)
	gitstatetest.Git(t, p.b, "remote", "add", "origin", p.origin)
	gitstatetest.Git(t, p.b, "fetch", "-q", "origin", "main")
	gitstatetest.Git(t, p.b, "config", "codex.firstSyncDays", "10")
	p.sb, err = gitstate.Open(p.b, gitstate.Options{Now: func() time.Time { return p.now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.sb.Close() })
	res, err := p.sb.Sync(ctx, "origin", syncOpts())
	if err != nil {
		t.Fatal(err)
	}
	if res.Merge.Status != gitstate.MergeFastForward {
		t.Fatalf("first sync: %+v", res.Merge)
	}
	return p
}

func syncOpts() gitstate.SyncOptions {
	return gitstate.SyncOptions{Resolve: clockResolver, Finish: finishMeta, Push: true}
}

// The first sync fetches the window's commits only: git's shallow file
// lists the oldest of them, the code stays whole, and the history reads
// as git reads it, stopping at the boundary.
func TestShallowFirstSync(t *testing.T) {
	ctx := context.Background()
	p := newShallowPair(t)
	if got := strings.TrimSpace(gitstatetest.Git(t, p.b, "rev-parse", "--is-shallow-repository")); got != "true" {
		t.Fatalf("is-shallow-repository %s after the first sync", got)
	}
	if got := gitstatetest.Git(t, p.b, "rev-list", "--count", gitstate.RefState); got != "3" {
		t.Errorf("the first sync fetched %s state commits, want the window's 3", got)
	}
	shallow := strings.TrimSpace(gitstatetest.Git(t, p.b, "rev-parse", "--git-path", "shallow"))
	if b := strings.TrimSpace(readFile(t, filepath.Join(p.b, shallow))); b != p.recent[0] {
		t.Errorf("shallow file %q, want the window's oldest commit %s alone", b, p.recent[0])
	}
	at, cut, err := p.sb.HistoryCutOff(ctx)
	if err != nil || !cut || !at.Equal(p.now.Add(-3*24*time.Hour)) {
		t.Errorf("HistoryCutOff = %v, %v, %v; want the boundary's time %v", at, cut, err, p.now.Add(-3*24*time.Hour))
	}

	// the log walks to the boundary and marks it, without an error
	var seen []string
	if err := p.sb.Events(ctx, "", func(ev gitstate.Event) bool {
		seen = append(seen, ev.Commit)
		if ev.CutOff != (ev.Commit == p.recent[0]) {
			t.Errorf("event %s: CutOff %v", ev.Commit[:12], ev.CutOff)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 {
		t.Errorf("Events saw %d commits, want 3", len(seen))
	}
	if _, err := p.sb.Changes(ctx, p.recent[0]); !errors.Is(err, gitstate.ErrHistoryCutOff) {
		t.Errorf("Changes of the boundary: %v, want ErrHistoryCutOff", err)
	}
	if ch, err := p.sb.Changes(ctx, p.recent[1]); err != nil || len(ch) != 1 {
		t.Errorf("Changes inside the window: %v, %v", ch, err)
	}

	// ?at= inside the window answers; before it, HISTORY_CUT_OFF
	if h, err := p.sb.StateAt(ctx, p.now.Add(-36*time.Hour)); err != nil || h != p.recent[1] {
		t.Errorf("StateAt 36 h back = %s, %v; want %s", h, err, p.recent[1])
	}
	var ce *gitstate.CutOffError
	if _, err := p.sb.StateAt(ctx, p.now.Add(-25*24*time.Hour)); !errors.As(err, &ce) || !errors.Is(err, gitstate.ErrHistoryCutOff) {
		t.Errorf("StateAt 25 days back: %v, want a CutOffError", err)
	} else if !strings.Contains(err.Error(), "git codex sync --full") || !strings.Contains(err.Error(), "git codex sync --deepen <days>") {
		t.Errorf("the error does not say how to fetch the rest: %v", err)
	}

	// status's walk (inHistory) stops at the boundary too
	if _, err := p.sb.RemoteStates(ctx); err != nil {
		t.Errorf("RemoteStates: %v", err)
	}

	// git's own checks and maintenance are clean
	gitstatetest.Git(t, p.b, "fsck", "--strict", "--no-dangling")
	gitstatetest.Git(t, p.b, "gc", "-q")
	gitstatetest.Git(t, p.b, "fsck", "--strict", "--no-dangling")

	// both sides write; each sync merges, and the shallow clone pushes
	for _, s := range []*gitstate.Store{p.sa, p.sb} {
		if _, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(meta("put"))
			return tx.Put("mail/z/"+strconv.FormatInt(time.Now().UnixNano(), 10)+".json", rec{N: 1})
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.sa.Sync(ctx, "origin", syncOpts()); err != nil {
		t.Fatal(err)
	}
	res, err := p.sb.Sync(ctx, "origin", syncOpts())
	if err != nil {
		t.Fatal(err)
	}
	if res.Merge.Status != gitstate.MergeMerged || !res.Pushed {
		t.Fatalf("sync of the shallow clone: %+v", res)
	}
	if got, want := gitstatetest.Git(t, p.origin, "rev-parse", gitstate.RefState), gitstatetest.Git(t, p.b, "rev-parse", gitstate.RefState); got != want {
		t.Errorf("origin's state %s, the shallow clone's %s", got, want)
	}
	if n := len(tipRecords(t, p.b)); n != 1+5+3+2 {
		t.Errorf("the merged tip holds %d records, want 11", n)
	}

	// Unshallow fetches the rest, and the cut is gone
	if ok, err := p.sb.Unshallow(ctx, "origin", nil); err != nil || !ok {
		t.Fatalf("Unshallow: %v, %v", ok, err)
	}
	if got := strings.TrimSpace(gitstatetest.Git(t, p.b, "rev-parse", "--is-shallow-repository")); got != "false" {
		t.Errorf("is-shallow-repository %s after Unshallow", got)
	}
	if _, cut, err := p.sb.HistoryCutOff(ctx); err != nil || cut {
		t.Errorf("HistoryCutOff after Unshallow: %v, %v", cut, err)
	}
	if h, err := p.sb.StateAt(ctx, p.now.Add(-25*24*time.Hour)); err != nil || h != p.old[2] {
		t.Errorf("StateAt 25 days back after Unshallow = %s, %v; want %s", h, err, p.old[2])
	}
}

// Deepen moves the cut-off back to the days asked for, counted from the
// state's newest commit, and never forward: a window shorter than what is
// here fetches nothing and leaves the shallow file as it was.
func TestShallowDeepen(t *testing.T) {
	ctx := context.Background()
	p := newShallowPair(t) // b has the last 10 days: the 3 recent commits, the tip a day back
	shallowFile := filepath.Join(p.b, strings.TrimSpace(gitstatetest.Git(t, p.b, "rev-parse", "--git-path", "shallow")))
	before := readFile(t, shallowFile)
	// 2 days from the tip: what is here (git is not asked); 5: more,
	// but no commit was made between 3 and 6 days back
	for _, d := range []float64{2, 5} {
		if from, ok, err := p.sb.Deepen(ctx, "origin", d, nil); err != nil || ok || !from.Equal(p.now.Add(-3*24*time.Hour)) {
			t.Fatalf("Deepen %v = %v, %v, %v; want the boundary not moved, from the boundary's time", d, from, ok, err)
		}
		if after := readFile(t, shallowFile); after != before {
			t.Errorf("Deepen %v changed the shallow file: %q, was %q", d, after, before)
		}
	}
	// 22 days back from the tip (a day back): the old commits of 20 and
	// 15 days back, not the one of 25
	if _, ok, err := p.sb.Deepen(ctx, "origin", 22, nil); err != nil || !ok {
		t.Fatalf("Deepen 22 = %v, %v", ok, err)
	}
	if got := gitstatetest.Git(t, p.b, "rev-list", "--count", gitstate.RefState); got != "5" {
		t.Errorf("%s state commits after Deepen 22, want 5", got)
	}
	if b := strings.TrimSpace(readFile(t, shallowFile)); b != p.old[3] {
		t.Errorf("shallow file %q after Deepen 22, want the commit of 20 days back %s", b, p.old[3])
	}
	if h, err := p.sb.StateAt(ctx, p.now.Add(-18*24*time.Hour)); err != nil || h != p.old[3] {
		t.Errorf("StateAt 18 days back = %s, %v; want %s", h, err, p.old[3])
	}
	if _, err := p.sb.StateAt(ctx, p.now.Add(-26*24*time.Hour)); !errors.Is(err, gitstate.ErrHistoryCutOff) {
		t.Errorf("StateAt 26 days back: %v, want ErrHistoryCutOff", err)
	}
	// a bad number of days is refused before anything runs
	for _, d := range []float64{0, -1} {
		if _, _, err := p.sb.Deepen(ctx, "origin", d, nil); err == nil {
			t.Errorf("Deepen %v: no error", d)
		}
	}
	// past the first commit: whole
	if _, ok, err := p.sb.Deepen(ctx, "origin", 100, nil); err != nil || !ok {
		t.Fatalf("Deepen 100 = %v, %v", ok, err)
	}
	if _, cut, err := p.sb.HistoryCutOff(ctx); err != nil || cut {
		t.Errorf("HistoryCutOff after Deepen 100: %v, %v", cut, err)
	}
	if got := gitstatetest.Git(t, p.b, "rev-list", "--count", gitstate.RefState); got != "9" {
		t.Errorf("%s state commits after Deepen 100, want 9", got)
	}
	// nothing left to deepen
	if _, ok, err := p.sb.Deepen(ctx, "origin", 100, nil); err != nil || ok {
		t.Errorf("Deepen of a whole history = %v, %v", ok, err)
	}
	gitstatetest.Git(t, p.b, "fsck", "--strict", "--no-dangling")
}

// A clock at the boundary is taken as given: the window's first commit
// has a clock far above the number of commits fetched, which a whole
// fetch would refuse (checkClock) and a shallow one must not.
func TestShallowFirstSyncClock(t *testing.T) {
	p := newShallowPair(t)
	// (newShallowPair's first sync succeeded: 3 commits fetched, the
	// tip's clock 9)
	c := gitstatetest.Git(t, p.b, "log", "-1", "--format=%(trailers:key=Codex-Clock,valueonly)", gitstate.RefState)
	if strings.TrimSpace(c) != "9" {
		t.Errorf("the tip's clock is %q, want 9 (init, 5 old, 3 recent)", c)
	}
}

// codex.firstSyncDays=0 fetches the whole history, and the window counts
// back from the state's newest commit, not from the clock: a state nobody
// wrote to for a month still comes with its last day.
func TestShallowFirstSyncSettings(t *testing.T) {
	ctx := context.Background()
	p := newShallowPair(t)
	for _, tc := range []struct {
		days    string
		now     time.Time
		commits string
		shallow bool
	}{
		{"0", p.now, "9", false},
		{"1", p.now.Add(30 * 24 * time.Hour), "2", true}, // the tip, and the commit a day before it
	} {
		dir := gitstatetest.NewRepo(t)
		gitstatetest.Git(t, dir, "remote", "add", "origin", p.origin)
		gitstatetest.Git(t, dir, "config", "codex.firstSyncDays", tc.days)
		now := tc.now
		s, err := gitstate.Open(dir, gitstate.Options{Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Sync(ctx, "origin", gitstate.SyncOptions{Resolve: clockResolver, Finish: finishMeta}); err != nil {
			t.Fatalf("days=%s: %v", tc.days, err)
		}
		if got := gitstatetest.Git(t, dir, "rev-list", "--count", gitstate.RefState); got != tc.commits {
			t.Errorf("days=%s: %s state commits, want %s", tc.days, got, tc.commits)
		}
		if _, cut, err := s.HistoryCutOff(ctx); err != nil || cut != tc.shallow {
			t.Errorf("days=%s: cut off %v, %v", tc.days, cut, err)
		}
		s.Close()
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A first sync whose fetch fails between the tip and its window (here the
// remote's record archive, fetched in between, fails git's object checks)
// forgets the tip: the next sync is a first sync again and fetches the
// window, rather than finding the remote's state here and fetching
// nothing before it.
func TestShallowFirstSyncFailsBetweenTipAndWindow(t *testing.T) {
	ctx := context.Background()
	p := newShallowPair(t)
	// a commit git's fsck refuses (no author), under an archive's name
	cmd := exec.Command("git", "hash-object", "-t", "commit", "--literally", "-w", "--stdin")
	cmd.Dir = p.origin
	cmd.Stdin = strings.NewReader("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\ncommitter x <x@y> 1 +0000\n\nno author\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.TrimSpace(string(out))
	day := p.now.Format(time.DateOnly)
	gitstatetest.Git(t, p.origin, "update-ref", gitstate.RecordArchivePrefix+day+"-bad", bad)

	dir := gitstatetest.NewRepo(t)
	gitstatetest.Git(t, dir, "remote", "add", "origin", p.origin)
	gitstatetest.Git(t, dir, "config", "codex.firstSyncDays", "10")
	s, err := gitstate.Open(dir, gitstate.Options{Now: func() time.Time { return p.now }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Sync(ctx, "origin", syncOpts()); !errors.Is(err, gitstate.ErrInvalidState) {
		t.Fatalf("first sync beside a malformed archive: %v, want ErrInvalidState", err)
	}
	if out := gitstatetest.Git(t, dir, "for-each-ref", gitstate.RemoteStateRef("origin")); out != "" {
		t.Errorf("the tip's remote-tracking ref stayed: %s", out)
	}
	gitstatetest.Git(t, p.origin, "update-ref", "-d", gitstate.RecordArchivePrefix+day+"-bad")
	if _, err := s.Sync(ctx, "origin", syncOpts()); err != nil {
		t.Fatal(err)
	}
	if got := gitstatetest.Git(t, dir, "rev-list", "--count", gitstate.RefState); got != "3" {
		t.Errorf("the sync after fetched %s state commits, want the window's 3", got)
	}
}

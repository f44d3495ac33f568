package gitstate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// A shallow state (issue 27): the first sync of a repository that has no
// state yet fetches the state's history over a window of days only
// (`git fetch --shallow-since`), so what a new clone fetches and checks
// grows with the window, not with the age of the repository. git records
// the commits at the window's edge in its shallow file; only git codex's
// commits are listed there (the fetch wants refs/codex/state alone), so
// the code's history is untouched. What lies beyond is fetched on demand:
// a merge whose base is beyond the edge deepens the history first
// (deepenForMerge), `git codex sync --deepen <days>` (Deepen) moves the
// edge back, and `git codex sync --full` (Unshallow) fetches it all.
// docs/STATE.md, "A shallow first sync", says what else follows.

// ErrHistoryCutOff means what was asked for lies before the boundary of a
// shallow state's history: this repository never fetched it. See
// CutOffError.
var ErrHistoryCutOff = errors.New("the state's history is cut off here")

// CutOffError says where the local history stops and how to fetch the
// rest.
type CutOffError struct {
	What string    // what was asked for, e.g. "the state at 2026-10-01T00:00:00Z"
	At   time.Time // the history is whole from here on (HistoryCutOff)
}

func (e *CutOffError) Error() string {
	return fmt.Sprintf("%s is before %s, where this repository's history of the state stops (a shallow first sync fetched the recent part only); %s",
		e.What, e.At.UTC().Format(time.RFC3339), FetchMoreHint)
}

func (e *CutOffError) Unwrap() error { return ErrHistoryCutOff }

// FetchMoreHint is what every message about the cut-off says to do about
// it: the two ways to fetch what lies before.
const FetchMoreHint = "`git codex sync --deepen <days>` fetches more of it, `git codex sync --full` all of it"

// DefaultFirstSyncDays is how many days of the state's history a first
// sync fetches when git config does not say (codex.firstSyncDays), back
// from its newest commit. A busy team of twenty agents adds ~4,700 commits
// and ~5 MB of history a day (docs/PERFORMANCE.md). A day, not a week:
// origin cannot serve a shallow fetch from its bitmap, so a shallow first
// sync costs about 1.5 s per day of window on this project's 2-CPU
// machine, and a week's window (~12-14 s extrapolated, ~35 MB) missed
// issue 27's 5 s, while a day's costs the same at any age of the
// repository: ~2 s of CPU and ~6 MB on a two-day state, and after
// (docs/PERFORMANCE.md, "The first sync's window"). The tip, which every
// view reads, comes whole either way; log and ?at= reach back a day, and
// a person who wants more asks: `git codex sync --deepen <days>`, or
// `--full` for all of it.
const DefaultFirstSyncDays = 1

// shallowSet is the repository's shallow commits (git's shallow file),
// empty in a repository fetched whole.
func (s *Store) shallowSet() (gitrepo.Shallow, error) {
	s.objMu.Lock()
	defer s.objMu.Unlock()
	return s.objects.Shallow()
}

// HistoryCutOff reports whether the state's history stops short in this
// repository (a shallow fetch left out what came before), and from when
// on it is whole: the newest commit time at the boundary (what is missing
// is older than every commit there when --shallow-since cut it; older
// than the commit it is a parent of when a depth did). Shallow commits
// that are not state commits (a shallow clone of the code) do not count.
func (s *Store) HistoryCutOff(ctx context.Context) (at time.Time, cut bool, err error) {
	set, err := s.shallowSet()
	if err != nil || len(set) == 0 {
		return time.Time{}, false, err
	}
	_, at, cut = s.boundaryTimes(set)
	return at, cut, nil
}

// boundaryTimes are the oldest and newest commit times of the state
// commits among the shallow commits set (cut is false when there are none).
func (s *Store) boundaryTimes(set gitrepo.Shallow) (oldest, newest time.Time, cut bool) {
	for h := range set {
		c, err := s.readCommit(h)
		if err != nil || clockOf(c.Message) == 0 {
			continue // gone since, or not a commit git codex wrote: the code's
		}
		when := c.Committer.When
		if !cut || when.After(newest) {
			newest = when
		}
		if !cut || when.Before(oldest) {
			oldest = when
		}
		cut = true
	}
	return oldest, newest, cut
}

// boundaryClock is the largest clock of the commits at the shallow
// boundary (0 without one). Their parents were never fetched, so their
// clocks cannot be checked against their history: checkClock takes them
// as given, as a shallow clone of code takes the boundary's content.
func (s *Store) boundaryClock() (Clock, error) {
	set, err := s.shallowSet()
	if err != nil {
		return 0, err
	}
	var max Clock
	for h := range set {
		if c, err := s.readCommit(h); err == nil {
			max = max.Witness(clockOf(c.Message))
		}
	}
	return max, nil
}

// firstSyncDays is codex.firstSyncDays from git config: how many days of
// the state's history a first sync fetches, back from its newest commit;
// 0 fetches it all.
func (s *Store) firstSyncDays() float64 {
	if d := s.firstDays.Load(); d != nil {
		return *d
	}
	return s.config().firstSyncDays
}

// FirstSyncDays makes this Store's first sync of a repository fetch the
// state's last days of history, whatever codex.firstSyncDays says
// (`git codex sync --deepen <days>` on a repository without state: one
// shallow fetch of the window asked for, not a day's and then a second).
func (s *Store) FirstSyncDays(days float64) { s.firstDays.Store(&days) }

// firstSyncWindow is how much of the state's history the first fetch of
// the state from remote takes: codex.firstSyncDays, or 0 to fetch it
// whole (the setting is 0, or the repository already has the state or a
// copy of the remote's).
func (s *Store) firstSyncWindow(remote string) (time.Duration, error) {
	days := s.firstSyncDays()
	if days <= 0 || s.wholeHistory.Load() {
		return 0, nil
	}
	for _, ref := range []string{RefState, RemoteStateRef(remote)} {
		if _, ok, err := gitrepo.ReadRef(s.commonDir, ref); err != nil || ok {
			return 0, err
		}
	}
	return time.Duration(days * float64(24*time.Hour)), nil
}

// fetchTip is the first step of the first fetch of the state over a
// window: the tip alone (--depth=1), for its time, from which the window
// counts back (since). The window counts back from the state's newest
// commit, not from the clock: a state nobody wrote to for a while still
// comes with its last window of history, and what a first sync fetches
// and checks does not depend on the machine's clock. fetchWindow then
// fetches the window's history; between the two, fetch takes the notes and
// the record archives while the repository holds one state commit (see
// fetch).
func (s *Store) fetchTip(ctx context.Context, progress io.Writer, base []string, remote, spec string, window time.Duration) (since time.Time, err error) {
	args := append(append([]string{}, base...), "--depth=1", remote, spec)
	if err := s.gitProgress(ctx, progress, args...); err != nil {
		return time.Time{}, err
	}
	tip, ok, err := gitrepo.ReadRef(s.commonDir, RemoteStateRef(remote))
	if err != nil || !ok {
		return time.Time{}, errors.Join(err, fmt.Errorf("gitstate: fetch %s: %s was not fetched", remote, RefState))
	}
	c, err := s.readCommit(tip)
	if err != nil {
		return time.Time{}, fmt.Errorf("gitstate: %w: the remote's %s: %v", ErrInvalidState, RefState, err)
	}
	return c.Committer.When.Add(-window), nil
}

// fetchWindow fetches the state's history back to since
// (--shallow-since), after fetchTip.
func (s *Store) fetchWindow(ctx context.Context, progress io.Writer, base []string, remote, spec string, since time.Time) error {
	args := append(append([]string{}, base...), "--shallow-since=@"+strconv.FormatInt(since.Unix(), 10), remote, spec)
	return s.gitProgress(ctx, progress, args...)
}

// errNeedsDeeperHistory is what a merge in a shallow repository returns
// when the two histories part beyond the boundary: their merge base is not
// here, and a merge against a base found short of it would bring back what
// one side deleted. Sync deepens the history and merges again.
var errNeedsDeeperHistory = errors.New("the merge base lies beyond the shallow boundary")

// wholeDepth is the depth that fetches the state's history whole. Not
// --unshallow, nor --depth=2147483647 (git's INFINITE_DEPTH, which
// --unshallow sends): to that, upload-pack answers by unshallowing every
// commit the client's shallow file lists, the code's of a shallow clone
// too, and git then fetches the code's whole history. Nor --deepen, which
// deepens from every boundary, the code's included. A depth counted from
// the state's tip deepens the state alone (sync_shallow.txtar, the clone d).
const wholeDepth = "--depth=2147483646"

// deepenForMerge fetches the whole history of the state from a remote
// whose state, as last fetched, reaches the commits at this repository's
// shallow boundary: the remote the shallow history came from. The remote
// being synced is tried first; a peer that never had that history (its
// state parted from ours before the boundary) cannot deepen it, and
// neither can --deepen, which counts from the wanted tips. It reports
// whether the boundary moved.
func (s *Store) deepenForMerge(ctx context.Context, remote string, progress io.Writer) (bool, error) {
	before, err := s.shallowSet()
	if err != nil {
		return false, err
	}
	var boundary []plumbing.Hash
	for h := range before {
		if c, err := s.readCommit(h); err == nil && clockOf(c.Message) > 0 {
			boundary = append(boundary, h)
		}
	}
	names, err := s.remoteStateNames()
	if err != nil {
		return false, err
	}
	from := ""
	for _, r := range append([]string{remote}, names...) {
		if checkRemote(r) != nil || strings.HasPrefix(remoteDir(r), remotesPrefix+"url-") && r != remote {
			continue // (a URL synced once is known by its hash only)
		}
		tip, ok, err := gitrepo.ReadRef(s.commonDir, RemoteStateRef(r))
		if err != nil || !ok {
			continue
		}
		for _, b := range boundary {
			if s.git(ctx, nil, "merge-base", "--is-ancestor", b.String(), tip.String()) == nil {
				from = r
				break
			}
		}
		if from != "" {
			break
		}
	}
	if from == "" {
		return false, nil
	}
	if progress != nil {
		fmt.Fprintf(progress, "git codex: the merge needs state history from before where this repository's shallow history stops; fetching it from %s\n", from)
	}
	args := []string{"-c", "fetch.fsckObjects=true", "fetch", "--no-tags", "--no-write-fetch-head", "--no-filter", "--quiet", wholeDepth,
		from, "+" + RefState + ":" + RemoteStateRef(from)}
	if err := s.gitProgress(ctx, progress, args...); err != nil {
		return false, fmt.Errorf("gitstate: fetch the state's history from %s: %w: %v", from, ErrRemote, err)
	}
	after, err := s.shallowSet()
	if err != nil {
		return false, err
	}
	for _, b := range boundary {
		if !after[b] {
			return true, nil
		}
	}
	return false, nil
}

// WholeHistory makes this Store's syncs fetch the state's history whole
// when they are a repository's first (`git codex sync --full` before it
// syncs): one fetch of everything, rather than a shallow first fetch that
// Unshallow then deepens with a second.
func (s *Store) WholeHistory() { s.wholeHistory.Store(true) }

// Unshallow fetches the whole of the state's history from remote into a
// repository whose first sync fetched it shallow (`git codex sync
// --full`). It reports whether there was anything to fetch; the code's
// history, shallow or not, is not touched (wholeDepth).
func (s *Store) Unshallow(ctx context.Context, remote string, progress io.Writer) (bool, error) {
	if err := checkRemote(remote); err != nil {
		return false, err
	}
	unlock, err := s.lockSync(ctx)
	if err != nil {
		return false, err
	}
	defer unlock()
	if _, cut, err := s.HistoryCutOff(ctx); err != nil || !cut {
		return false, err
	}
	args := []string{"-c", "fetch.fsckObjects=true", "fetch", "--no-tags", "--no-write-fetch-head", "--no-filter", wholeDepth}
	if progress != nil {
		args = append(args, "--progress")
	} else {
		args = append(args, "--quiet")
	}
	args = append(args, remote, "+"+RefState+":"+RemoteStateRef(remote))
	if err := s.gitProgress(ctx, progress, args...); err != nil {
		return false, fmt.Errorf("gitstate: fetch the whole state from %s: %w: %v", remote, ErrRemote, err)
	}
	return true, nil
}

// Deepen fetches more of the state's history from remote into a
// repository whose history is cut off (`git codex sync --deepen <days>`):
// back to days before the state's newest commit here (the local state's,
// or the remote's as fetched), by `git fetch --shallow-since` of
// refs/codex/state alone, so a shallow clone's code boundary stays where
// it is (upload-pack unshallows only the commits its walk from the wanted
// tip reaches). It moves the cut-off back only: a time not before the
// oldest commit at the boundary fetches nothing, since git, asked for it,
// would mark the fetched commits older than that time shallow and cut the
// history shorter. from is the cut-off before (zero when the history was
// not cut off), moved whether the boundary did (no commit of the state
// lies between the two times, or the remote lacks them: it stays).
func (s *Store) Deepen(ctx context.Context, remote string, days float64, progress io.Writer) (from time.Time, moved bool, err error) {
	if err := checkRemote(remote); err != nil {
		return time.Time{}, false, err
	}
	if !(days > 0) {
		return time.Time{}, false, fmt.Errorf("gitstate: deepen by %v days: not a number of days above 0", days)
	}
	unlock, err := s.lockSync(ctx)
	if err != nil {
		return time.Time{}, false, err
	}
	defer unlock()
	set, err := s.shallowSet()
	if err != nil || len(set) == 0 {
		return time.Time{}, false, err
	}
	oldest, newest, cut := s.boundaryTimes(set)
	if !cut {
		return time.Time{}, false, nil
	}
	tip, ok, err := gitrepo.ReadRef(s.commonDir, RefState)
	if err == nil && !ok {
		tip, ok, err = gitrepo.ReadRef(s.commonDir, RemoteStateRef(remote))
	}
	if err != nil || !ok {
		return newest, false, err
	}
	c, err := s.readCommit(tip)
	if err != nil {
		return newest, false, err
	}
	since := c.Committer.When.Add(-time.Duration(days * float64(24*time.Hour)))
	if !since.Before(oldest) {
		return newest, false, nil
	}
	args := []string{"-c", "fetch.fsckObjects=true", "fetch", "--no-tags", "--no-write-fetch-head", "--no-filter",
		"--shallow-since=@" + strconv.FormatInt(since.Unix(), 10)}
	if progress != nil {
		args = append(args, "--progress")
	} else {
		args = append(args, "--quiet")
	}
	args = append(args, remote, "+"+RefState+":"+RemoteStateRef(remote))
	if err := s.gitProgress(ctx, progress, args...); err != nil {
		return newest, false, fmt.Errorf("gitstate: fetch the state's history since %s from %s: %w: %v", since.UTC().Format(time.RFC3339), remote, ErrRemote, err)
	}
	after, err := s.shallowSet()
	if err != nil {
		return newest, false, err
	}
	for h := range set {
		if !after[h] {
			return newest, true, nil
		}
	}
	return newest, false, nil
}

// checkBaseHere fails with errNeedsDeeperHistory when ours and theirs
// part beyond the shallow boundary (cutInDifference); in a repository
// fetched whole it reads one file's metadata.
func (s *Store) checkBaseHere(ctx context.Context, ours, theirs plumbing.Hash) error {
	set, err := s.shallowSet()
	if err != nil || len(set) == 0 {
		return err
	}
	cut, err := s.cutInDifference(ctx, ours, theirs, set)
	if err != nil {
		return err
	}
	if cut {
		return fmt.Errorf("gitstate: merge %s into %s: %w", theirs, ours, errNeedsDeeperHistory)
	}
	return nil
}

// cutInDifference reports whether a shallow commit is among the commits
// only one of ours and theirs reaches (git rev-list --left-right): then
// that side's history stops at the boundary before it meets the other's,
// and their merge base, if any, is beyond it. A boundary both reach is
// harmless: everything beyond it is shared history.
func (s *Store) cutInDifference(ctx context.Context, ours, theirs plumbing.Hash, set gitrepo.Shallow) (bool, error) {
	var out strings.Builder
	if err := s.git(ctx, &out, "rev-list", ours.String()+"..."+theirs.String()); err != nil {
		return false, err
	}
	for _, id := range strings.Fields(out.String()) {
		if plumbing.IsHash(id) && set[plumbing.NewHash(id)] {
			return true, nil
		}
	}
	return false, nil
}

// skipArchivesBeforeCutOff drops from a fetch's refspecs the record
// archives made more than a day before the shallow history's cut-off
// (the oldest commit at the boundary; before, when the first fetch of the
// state has not fetched its window yet, the time the window starts at,
// which that oldest commit will not precede), by the day in their names
// (RecordArchivePrefix + "<yyyy-mm-dd>-<id>"). They would come whole
// (parentless commits: no window applies), a day of a team's archived
// records each, and serve nothing here: the state commit an archive's
// manifest names is as old as the archive, beyond the boundary, so a merge
// cannot believe it (archivedIndex.check) nor a restore read it, and sync
// never adopts it. They stay on the remote until `git codex sync --deepen`
// reaches them or `--full` fetches the whole history, and them with it
// (docs/STATE.md, "A shallow first sync"). A repository fetched whole, and
// an archive whose name carries no day (an archived cycle), fetch as
// before. An archive named with a wrong day is not fetched or is: either
// way it is checked as every archive is, and one that is not here lets no
// deletion stand.
func (s *Store) skipArchivesBeforeCutOff(specs []string, windowFrom time.Time) ([]string, error) {
	oldest := windowFrom
	if oldest.IsZero() {
		set, err := s.shallowSet()
		if err != nil || len(set) == 0 {
			return specs, err
		}
		var cut bool
		if oldest, _, cut = s.boundaryTimes(set); !cut {
			return specs, nil
		}
	}
	out := specs[:0:0]
	for _, spec := range specs {
		if day, ok := recordArchiveDay(strings.TrimPrefix(spec, "+")); ok && day.AddDate(0, 0, 2).Before(oldest) {
			continue
		}
		out = append(out, spec)
	}
	return out, nil
}

// recordArchiveDay is the day in a record archive's name (the source of
// a refspec, or a ref): RecordArchivePrefix + "<yyyy-mm-dd>-<id>".
func recordArchiveDay(ref string) (time.Time, bool) {
	rest, ok := strings.CutPrefix(ref, RecordArchivePrefix)
	if !ok || len(rest) < len(time.DateOnly) {
		return time.Time{}, false
	}
	day, err := time.Parse(time.DateOnly, rest[:len(time.DateOnly)])
	return day, err == nil
}

package gitstate

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// Refs that sync moves between machines.
const (
	// NotesPrefix starts every notes ref git codex writes (refs/notes/codex,
	// refs/notes/codex-reviews, ...).
	NotesPrefix = "refs/notes/codex"
	// ArchivePrefix holds archived cycles, one commit per cycle id
	// (refs/codex/archive/<cycle_id>), written once: sync copies those a
	// side lacks and never overwrites one.
	ArchivePrefix = "refs/codex/archive/"
	// remotesPrefix holds what was fetched from each remote:
	// refs/codex/remotes/<remote>/state and .../notes/codex*.
	remotesPrefix = "refs/codex/remotes/"
)

// Sync errors.
var (
	// ErrRemote means the remote could not be reached or refused to talk.
	ErrRemote = errors.New("remote unreachable")
	// ErrPushRefused means the remote refused the push for a reason
	// retrying cannot fix: a hook of the remote's (pre-receive, update),
	// permissions, a full disk.
	ErrPushRefused = errors.New("push refused")
	// ErrPushRejected means the remote's state moved since the fetch; sync
	// fetches, merges and pushes again.
	ErrPushRejected = errors.New("push rejected: the remote moved")
)

// RemoteStateRef is where the remote's state is fetched to.
func RemoteStateRef(remote string) string { return remoteDir(remote) + "state" }

// remoteDir is the directory of refs fetched from a remote:
// refs/codex/remotes/<name>/ for a configured remote such as "origin", and
// refs/codex/remotes/url-<hash>/ for a URL or path given instead (which
// cannot be part of a ref name).
func remoteDir(remote string) string {
	if remoteNamePattern.MatchString(remote) && !strings.HasSuffix(remote, ".lock") && !strings.Contains(remote, "..") {
		return remotesPrefix + remote + "/"
	}
	sum := sha1.Sum([]byte(remote))
	return remotesPrefix + "url-" + hex.EncodeToString(sum[:6]) + "/"
}

var remoteNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// checkRemote refuses a remote git would take for an option.
func checkRemote(remote string) error {
	if remote == "" || strings.HasPrefix(remote, "-") {
		return fmt.Errorf("gitstate: %q is not a remote: %w", remote, ErrRemote)
	}
	return nil
}

// FetchRefspecs are the refspecs that carry git codex's refs from remote;
// `git codex remote add` puts them in the remote's config, so plain
// `git fetch` brings them too.
func FetchRefspecs(remote string) []string {
	return []string{
		"+" + RefState + ":" + RemoteStateRef(remote),
		"+" + NotesPrefix + "*:" + remoteDir(remote) + "notes/codex*",
		"+" + ArchivePrefix + "*:" + remoteDir(remote) + "archive/*",
	}
}

// PushRefspecs are the refspecs that publish git codex's refs. The state is
// pushed without "+": the remote accepts only fast-forwards, so a state that
// moved there is never overwritten.
func PushRefspecs() []string {
	return []string{RefState + ":" + RefState, NotesPrefix + "*:" + NotesPrefix + "*", ArchivePrefix + "*:" + ArchivePrefix + "*"}
}

// Fetch brings the remote's state and notes into refs/codex/remotes/<remote>/.
// found is false when the remote has no git codex state. progress, if not
// nil, receives git's progress output.
func (s *Store) Fetch(ctx context.Context, remote string, progress io.Writer) (found bool, err error) {
	unlock, err := s.lockSync(ctx)
	if err != nil {
		return false, err
	}
	defer unlock()
	adv, err := s.fetch(ctx, remote, progress)
	return adv.found(), err
}

// advertised is what the remote's refs/codex/state and refs/notes/codex*
// pointed at when we listed them: ref name -> object id.
type advertised map[string]string

func (a advertised) found() bool { _, ok := a[RefState]; return ok }

// trackingRef is where fetch puts the remote's ref.
func trackingRef(remote, ref string) string {
	if ref == RefState {
		return RemoteStateRef(remote)
	}
	if id, ok := strings.CutPrefix(ref, ArchivePrefix); ok {
		return remoteDir(remote) + "archive/" + id
	}
	return remoteDir(remote) + "notes/" + strings.TrimPrefix(ref, "refs/notes/")
}

// fetch lists the remote's git codex refs and fetches those whose
// remote-tracking ref is not already at the advertised commit (a sync with
// nothing new transfers nothing). It returns the advertisement.
func (s *Store) fetch(ctx context.Context, remote string, progress io.Writer) (advertised, error) {
	if err := checkRemote(remote); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := s.git(ctx, &out, "ls-remote", remote, RefState, NotesPrefix+"*", ArchivePrefix+"*", waitingPrefix+"*"); err != nil {
		return nil, fmt.Errorf("gitstate: %s: %w: %v", remote, ErrRemote, err)
	}
	adv := advertised{}
	var specs []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && strings.HasPrefix(f[1], waitingPrefix) {
			adv[f[1]] = f[0] // listed, never fetched
			continue
		}
		if len(f) != 2 || (f[1] != RefState && !strings.HasPrefix(f[1], NotesPrefix) && !strings.HasPrefix(f[1], ArchivePrefix)) {
			continue
		}
		adv[f[1]] = f[0]
		dst := trackingRef(remote, f[1])
		if cur, ok, err := gitrepo.ReadRef(s.commonDir, dst); err == nil && ok && cur.String() == f[0] {
			continue
		}
		specs = append(specs, "+"+f[1]+":"+dst)
	}
	if err := s.pruneNotes(ctx, remote, adv); err != nil {
		return nil, err
	}
	if len(specs) == 0 {
		return adv, nil
	}
	// git checks every object it receives, as a remote with
	// receive.fsckObjects does (--strict: warnings, a NUL in a commit
	// message among them, refuse too): a hostile peer's malformed objects
	// never enter the object store, where git fsck (which reads every
	// object, reachable or not) would fail on them for good.
	// --no-filter: in a partial clone the state comes whole, not blob by
	// blob on demand (one round trip each) as its records are read.
	args := []string{"-c", "fetch.fsckObjects=true", "fetch", "--no-tags", "--no-write-fetch-head", "--no-filter"}
	if progress != nil {
		args = append(args, "--progress")
	} else {
		args = append(args, "--quiet")
	}
	// The first fetch of the state is shallow (shallow.go), on its own:
	// git applies --shallow-since to every ref a fetch wants, and the
	// notes and the archives (parentless commits, older than the window
	// once archived) come whole. They come between the tip and the
	// window: while the repository holds the tip alone, what the remote
	// counts as ours to leave out of their pack is the tip's tree; after
	// the window it was the whole window's objects, walked without the
	// remote's bitmap (a shallow client's fetch cannot use it): at 72
	// simulated hours the archives' fetch cost 0.53 s of CPU after the
	// window and 0.32 s before it, and the window's fetch, which then
	// finds the archived records' objects here, less too
	// (docs/PERFORMANCE.md, "The first sync's window").
	stateSpec := "+" + RefState + ":" + RemoteStateRef(remote)
	var window time.Duration
	if i := slices.Index(specs, stateSpec); i >= 0 {
		var err error
		if window, err = s.firstSyncWindow(remote); err != nil {
			return nil, err
		}
		if window > 0 {
			specs = slices.Delete(specs, i, i+1)
		}
	}
	var tips []string
	if window == 0 {
		tips = s.negotiationTips(remote)
	}
	var since time.Time // the window's start, once its tip is here
	for attempt := 1; ; attempt++ {
		var err error
		if window > 0 && since.IsZero() {
			// once only: a second --depth=1 after the window would cut
			// the history fetched back to the tip
			since, err = s.fetchTip(ctx, progress, args, remote, stateSpec, window)
		}
		if err == nil && len(specs) > 0 {
			if specs, err = s.skipArchivesBeforeCutOff(specs, since); err == nil && len(specs) > 0 {
				err = s.gitProgress(ctx, progress, append(append(append(args[:len(args):len(args)], tips...), remote), specs...)...)
			}
			if err == nil {
				specs = nil
			}
		}
		if err == nil && window > 0 {
			if err = s.fetchWindow(ctx, progress, args, remote, stateSpec, since); err == nil {
				window = 0
			}
		}
		if err != nil && window > 0 && !since.IsZero() && !strings.Contains(err.Error(), "cannot lock ref") {
			// the tip came, its window did not: forget the tip, so the
			// next sync is a first sync again rather than one that finds
			// the remote's state here and fetches nothing before it
			s.dropTracking(ctx, remote, RemoteStateRef(remote))
		}
		switch {
		case err == nil:
			return adv, nil
		case strings.Contains(err.Error(), "fsck error"):
			return nil, fmt.Errorf("gitstate: fetch %s: %w: git refused the objects it was sent: %s", remote, ErrInvalidState, fsckErrors(err))
		case len(tips) > 0 && tipNotFound(err) && attempt < fetchAttempts:
			// git checks each --negotiation-tip's object in the packs it
			// listed when it started, without looking again (a quick
			// lookup): a repack that replaced the pack holding it in
			// between (git's gc or maintenance, ours after a write) makes
			// the fetch die "the object <tip> does not exist" though the
			// object is here. Again, with the packs as they are now
			// (git 2.39: `git fetch --negotiation-tip` beside `git repack
			// -ad` in a loop failed 1 time in 300 so; a 30-day simulation
			// stopped on it after ~20,000 syncs).
		case !strings.Contains(err.Error(), "cannot lock ref"):
			return nil, fmt.Errorf("gitstate: fetch %s: %w: %v", remote, ErrRemote, err)
		case attempt == fetchAttempts:
			// a local failure, not the remote's: say so
			return nil, fmt.Errorf("gitstate: fetch %s: another process kept updating the remote-tracking refs: %v", remote, err)
		}
		s.removeStaleTrackingLocks(remote, err)
		// a plain `git fetch` of the same refs got there first: again
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("gitstate: fetch %s: %w", remote, ctx.Err())
		case <-time.After(time.Duration(attempt) * 50 * time.Millisecond):
		}
	}
}

// tipNotFound reports whether a fetch died because a --negotiation-tip's
// object was not found (builtin/fetch.c: "the object %s does not exist").
func tipNotFound(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "fatal: the object ") && strings.Contains(msg, " does not exist")
}

// negotiationTips are the --negotiation-tip options of a fetch after the
// first: the local state, its remote-tracking ref and the notes refs, local
// and fetched. By default git offers the remote every local ref's history
// as what it has, newest first, and the newest commits of a clone are its
// own reads (refs/codex/reads/*, never pushed): a day-behind sync of the
// simulation's clone 0 offered ~500 of them, in vain, in 5 rounds where 2
// do (docs/PERFORMANCE.md, "The day-behind sync over a week"); each round
// is a round trip to a networked remote. What git
// codex fetches has its history in those refs, so the remote still leaves
// out of its pack all that is here. None when there is no state here (a
// first sync: git's own choice), and only refs that exist (git dies on a
// tip that does not resolve).
func (s *Store) negotiationTips(remote string) []string {
	var tips []string
	for _, ref := range []string{RefState, RemoteStateRef(remote)} {
		if _, ok, err := gitrepo.ReadRef(s.commonDir, ref); err == nil && ok {
			tips = append(tips, "--negotiation-tip="+ref)
		}
	}
	if len(tips) == 0 {
		return nil
	}
	// the notes refs git codex owns (localNotes' rule), and what it
	// fetched of the remote's
	notes, _ := s.localNotes()
	fetched, _ := gitrepo.ListRefs(s.commonDir, remoteDir(remote)+"notes/")
	for _, ref := range append(notes, fetched...) {
		tips = append(tips, "--negotiation-tip="+ref)
	}
	return tips
}

// fsckErrors is what git's object checks said of a refused fetch: its
// "error: object <id>: <msg-id>: <text>" lines, or all it said.
func fsckErrors(err error) string {
	var ge *gitError
	msg := err.Error()
	if errors.As(err, &ge) {
		msg = ge.Stderr
	}
	var lines []string
	for _, l := range strings.Split(msg, "\n") {
		if strings.HasPrefix(l, "error: object ") {
			lines = append(lines, strings.TrimPrefix(l, "error: "))
		}
	}
	if len(lines) == 0 {
		return oneLine(msg)
	}
	if len(lines) > maxInvalidListed {
		lines = append(lines[:maxInvalidListed], fmt.Sprintf("and %d more", len(lines)-maxInvalidListed))
	}
	return strings.Join(lines, "; ")
}

// dropTracking deletes the remote-tracking refs of a state or notes the
// sync refused: the refused objects then hang on no ref (a mirror of the
// repository does not carry them), and the next sync fetches afresh.
func (s *Store) dropTracking(ctx context.Context, remote string, refs ...string) {
	for _, ref := range refs {
		if _, ok, err := gitrepo.ReadRef(s.commonDir, ref); err == nil && ok {
			s.git(ctx, nil, "update-ref", "-d", ref)
		}
	}
}

// fetchAttempts bounds the retries of a fetch that lost the remote-tracking
// refs' locks to another fetch (a plain `git fetch` running at the time):
// about 5 s in all, like the writer's wait for git's ref lock.
const fetchAttempts = 15

// upToDate reports whether the remote, as advertised, already holds our
// state and every notes ref we would push, at the same commits: then a
// push would change nothing.
func (s *Store) upToDate(ctx context.Context, adv advertised, notes []string) (bool, error) {
	archives, err := s.unpublishedArchives(ctx, "", adv)
	if err != nil || len(archives) > 0 {
		return false, err
	}
	for _, ref := range append([]string{RefState}, notes...) {
		h, ok, err := gitrepo.ReadRef(s.commonDir, ref)
		if err != nil {
			return false, err
		}
		if !ok || adv[ref] != h.String() {
			return false, nil
		}
	}
	return true, nil
}

// Push publishes the local state and notes to remote. A remote whose state
// moved since our last fetch rejects the state (not a fast-forward):
// ErrPushRejected. A remote that refuses for another reason (a hook,
// permissions) or cannot be reached: ErrRemote.
func (s *Store) Push(ctx context.Context, remote string, progress io.Writer) error {
	unlock, err := s.lockSync(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	notes, err := s.localNotes()
	if err != nil {
		return err
	}
	return s.push(ctx, remote, progress, notes)
}

// push publishes the state and the local notes refs notes.
func (s *Store) push(ctx context.Context, remote string, progress io.Writer, notes []string) error {
	if err := checkRemote(remote); err != nil {
		return err
	}
	specs := []string{RefState + ":" + RefState}
	for _, n := range notes {
		specs = append(specs, n+":"+n)
	}
	archives, err := s.unpublishedArchives(ctx, remote, nil)
	if err != nil {
		return err
	}
	for _, a := range archives {
		specs = append(specs, a+":"+a)
	}
	// --no-verify: the state is not code. The repository's pre-push hook
	// (husky, pre-commit: linters, test runs) is written for the branches
	// people push; run on every sync it would block the coordination of
	// agents on a check of code it does not touch (see docs/STATE.md).
	// The remote's own hooks still run, and their refusal is reported as
	// theirs.
	args := []string{"push", "--porcelain", "--no-verify"}
	if progress != nil {
		args = append(args, "--progress")
	} else {
		args = append(args, "--quiet")
	}
	var out bytes.Buffer
	err = s.gitTo(ctx, &out, progress, append(append(args, remote), specs...)...)
	if err == nil {
		return nil
	}
	moved, refused := pushRefusals(out.String())
	if len(refused) > 0 {
		return fmt.Errorf("gitstate: push %s: %w: %s", remote, ErrPushRefused, strings.Join(refused, "; "))
	}
	if len(moved) > 0 {
		return fmt.Errorf("gitstate: push %s: %w (%s)", remote, ErrPushRejected, strings.Join(moved, "; "))
	}
	return fmt.Errorf("gitstate: push %s: %w: %v", remote, ErrRemote, err)
}

// pushRefusals reads `git push --porcelain` output and sorts the refs it
// refused: moved are refused because the remote's ref moved since we
// fetched it (not a fast-forward, or receive-pack's compare-and-swap failed
// because another push landed first), which another fetch-merge-push round
// fixes; refused are refused for any other reason (a hook, permissions, a
// full disk), which retrying cannot fix.
func pushRefusals(porcelain string) (moved, refused []string) {
	for _, line := range strings.Split(porcelain, "\n") {
		f := strings.Split(line, "\t")
		if len(f) < 3 || f[0] != "!" {
			continue
		}
		ref, summary := f[1], strings.Join(f[2:], " ")
		if _, dst, ok := strings.Cut(ref, ":"); ok {
			ref = dst
		}
		what := ref + " " + summary
		switch {
		case strings.HasPrefix(summary, "[rejected]"):
			moved = append(moved, what)
		case strings.HasPrefix(summary, "[remote rejected]") && lostRace(summary):
			moved = append(moved, what)
		default:
			refused = append(refused, what)
		}
	}
	return moved, refused
}

// lostRace reports a receive-pack refusal that means another push updated
// the ref between the advertisement and our update.
func lostRace(summary string) bool {
	for _, s := range []string{"failed to update ref", "failed to lock", "cannot lock ref", "incorrect old value", "stale info"} {
		if strings.Contains(summary, s) {
			return true
		}
	}
	return false
}

// localNotes lists the notes refs git codex owns: those `git for-each-ref
// refs/notes/codex*` lists (codex, codex-reviews; its * does not cross a
// slash).
func (s *Store) localNotes() ([]string, error) {
	refs, err := s.refsUnder("refs/notes/")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range refs {
		if rest, ok := strings.CutPrefix(r.name, NotesPrefix); ok && !strings.Contains(rest, "/") {
			out = append(out, r.name)
		}
	}
	return out, nil
}

// refAt is a ref and the object it points at.
type refAt struct {
	name string
	hash plumbing.Hash
}

// refsUnder lists the refs under prefix (ending in "/") and their objects,
// in name order, loose and packed, as `git for-each-ref <prefix>` lists
// them but without a git process: a day-behind sync listed three
// directories of refs, each a process start (docs/PERFORMANCE.md, "The
// day-behind sync side by side on two CPUs"). Like git's listing it keeps
// a ref whose object is missing and leaves out one that holds no object id
// (git's "ignoring broken ref"); a symbolic ref, which git codex never
// writes there, is left out too.
func (s *Store) refsUnder(prefix string) ([]refAt, error) {
	names, err := gitrepo.ListRefs(s.commonDir, prefix)
	if err != nil {
		return nil, err
	}
	out := make([]refAt, 0, len(names))
	for _, n := range names {
		if h, ok, err := gitrepo.ReadRef(s.commonDir, n); err == nil && ok {
			out = append(out, refAt{name: n, hash: h})
		}
	}
	return out, nil
}

// MergeNotes merges each notes ref fetched from remote into the local one
// by union of lines (git's cat_sort_uniq strategy), so notes written on
// either machine survive. A notes ref only the remote has is adopted.
//
// It holds the writer lock, like a transaction, so two syncs of one
// repository take turns instead of racing on the notes refs.
func (s *Store) MergeNotes(ctx context.Context, remote string) error {
	refs, err := s.refsUnder(remoteDir(remote) + "notes/")
	if err != nil {
		return err
	}
	var fetched [][2]string
	for _, r := range refs {
		fetched = append(fetched, [2]string{r.name, r.hash.String()})
	}
	return s.mergeNotes(ctx, remote, fetched)
}

// fetchedNotes are the remote-tracking notes refs of the notes refs the
// remote advertised, and their commits (where fetch put them).
func fetchedNotes(remote string, adv advertised) [][2]string {
	var out [][2]string
	for ref, h := range adv {
		if strings.HasPrefix(ref, NotesPrefix) {
			out = append(out, [2]string{trackingRef(remote, ref), h})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// mergeNotes is MergeNotes of the given remote-tracking notes refs (name,
// commit).
func (s *Store) mergeNotes(ctx context.Context, remote string, fetched [][2]string) error {
	if err := s.lockWriter(); err != nil {
		return err
	}
	defer s.unlockWriter()
	prefix := remoteDir(remote) + "notes/"
	for _, f := range fetched {
		local := "refs/notes/" + strings.TrimPrefix(f[0], prefix)
		cur, ok, err := gitrepo.ReadRef(s.commonDir, local)
		if err != nil {
			return err
		}
		if !ok {
			if err := s.git(ctx, nil, "update-ref", local, f[1], plumbing.ZeroHash.String()); err != nil {
				return fmt.Errorf("gitstate: adopt %s: %w", local, err)
			}
			continue
		}
		if cur.String() == f[1] {
			continue
		}
		if err := s.git(ctx, nil, "-c", "user.name=git codex", "-c", "user.email=git-codex@localhost",
			"notes", "--ref", local, "merge", "--quiet", "--strategy", "cat_sort_uniq", f[0]); err != nil {
			return fmt.Errorf("gitstate: merge notes %s: %w", local, err)
		}
	}
	return nil
}

// gitProgress runs git with its stderr (progress) copied to progress.
func (s *Store) gitProgress(ctx context.Context, progress io.Writer, args ...string) error {
	return s.gitTo(ctx, nil, progress, args...)
}

// SyncOptions configure Sync.
type SyncOptions struct {
	// Resolve, Validate and Finish are passed to MergeValidated. They run
	// while Sync holds the sync lock and the writer lock: they must not
	// call the Store's Fetch, Push, Sync or Update, which would wait for
	// those locks forever.
	Resolve  Resolver
	Validate Validator
	Finish   MergeFunc
	// ValidateCommit checks every incoming commit (MergeValidated's
	// Check.Commit).
	ValidateCommit CommitValidator
	// Layout is what the remote's state tree may hold, and which records
	// a merge keeps (MergeValidated's Check); nil: git's rules only.
	Layout *Layout
	// Push publishes the merged state; false makes Sync a pull.
	Push bool
	// Progress, if not nil, receives git's progress output, and a line
	// each time Sync tries again because the remote moved.
	Progress io.Writer
	// Budget bounds the time spent on rounds after the first when the
	// remote keeps moving (0: DefaultSyncBudget); Attempts, if more than
	// 0, bounds the number of rounds too.
	Budget   time.Duration
	Attempts int
}

// DefaultSyncBudget is how long Sync keeps trying while the remote's
// state keeps moving (another clone writing and syncing in a loop).
const DefaultSyncBudget = time.Minute

// SyncResult is what Sync did.
type SyncResult struct {
	Merge    MergeResult
	Found    bool // the remote had git codex state
	Pushed   bool // the remote has our state: pushed, or already there
	Sent     bool // a push sent it (false: the remote already had it)
	Attempts int
}

// Sync fetches the remote's state, merges it into the local state, merges
// notes, and (with Push) publishes the result. Refs the remote advertises at
// the commits we already have are neither fetched nor pushed again, so a
// sync with nothing new costs one `git ls-remote`. Everything fetched is
// checked before any of it becomes local: the state by MergeValidated, the
// notes by checkNotes. A push the remote rejects because its state moved
// meanwhile starts another round after a randomised, growing pause (so two
// busy clones fall out of step), until opts.Budget runs out. A remote that
// cannot be reached fails with ErrRemote before anything local changes.
// Syncs of one repository take turns (lockSync).
func (s *Store) Sync(ctx context.Context, remote string, opts SyncOptions) (SyncResult, error) {
	budget := opts.Budget
	if budget <= 0 {
		budget = DefaultSyncBudget
	}
	var res SyncResult
	unlock, err := s.lockSync(ctx)
	if err != nil {
		return res, err
	}
	defer unlock()
	start := time.Now()
	defer s.widenIndexCache(syncIndexBlocks)()
	var w waiter
	defer w.leave(s, remote)
	deepened := false
	s.repairMidx(ctx)
	for {
		res.Attempts++
		adv, err := s.fetch(ctx, remote, opts.Progress)
		if err != nil {
			return res, err
		}
		if opts.Push && w.yield(ctx, adv, remote, opts.Progress) {
			res.Attempts--
			continue
		}
		if err := s.checkNotes(ctx, remote, adv); err != nil {
			if errors.Is(err, ErrInvalidState) {
				notes, _ := gitrepo.ListRefs(s.commonDir, remoteDir(remote)+"notes/")
				s.dropTracking(ctx, remote, notes...)
			}
			return res, err
		}
		res.Found = adv.found()
		// one index of the record archives for the round's merge and its
		// adoption of the fetched archives: the archive a day-behind sync
		// brings is checked once, not in each (~0.03-0.05 s, a walk of
		// its ~1,850 records beside its state commit's tree)
		var archived *archivedIndex
		if opts.Layout != nil {
			archived = s.archivedIndex(ctx, opts.Layout)
		}
		if res.Found {
			check := Check{Validate: opts.Validate, Layout: opts.Layout, Commit: opts.ValidateCommit, archived: archived}
			res.Merge, err = s.MergeValidated(ctx, RemoteStateRef(remote), opts.Resolve, check, opts.Finish)
			if errors.Is(err, errNeedsDeeperHistory) && !deepened {
				// the histories part beyond the shallow boundary: fetch
				// the rest of ours, outside the writer lock, and merge again
				deepened = true
				if _, err := s.deepenForMerge(ctx, remote, opts.Progress); err != nil {
					return res, err
				}
				res.Attempts--
				continue
			}
			if errors.Is(err, errNeedsDeeperHistory) {
				// no remote synced with has what lies beyond: say which
				// command fetches it, and change nothing
				at, _, _ := s.HistoryCutOff(ctx)
				return res, fmt.Errorf("gitstate: sync %s: %w", remote, &CutOffError{What: "the base of a merge with the state of " + remote, At: at})
			}
			if err != nil {
				if errors.Is(err, ErrInvalidState) {
					s.dropTracking(ctx, remote, RemoteStateRef(remote))
				}
				return res, err
			}
		}
		if err := s.mergeNotes(ctx, remote, fetchedNotes(remote, adv)); err != nil {
			return res, err
		}
		if err := s.adoptArchives(ctx, remote, opts.Layout, archived); err != nil {
			return res, err
		}
		if !opts.Push {
			return res, nil
		}
		if _, ok, err := gitrepo.ReadRef(s.commonDir, RefState); err != nil || !ok {
			return res, errors.Join(err, fmt.Errorf("gitstate: nothing to push: %w", ErrNotInitialized))
		}
		notes, err := s.localNotes()
		if err != nil {
			return res, err
		}
		if same, err := s.upToDate(ctx, adv, notes); err != nil {
			return res, err
		} else if same {
			// the remote already has exactly what we would push
			res.Pushed = true
			return res, nil
		}
		err = s.push(ctx, remote, opts.Progress, notes)
		if err == nil {
			res.Pushed, res.Sent = true, true
			return res, nil
		}
		if !errors.Is(err, ErrPushRejected) {
			return res, err
		}
		wait := retryPause(res.Attempts)
		spent := time.Since(start)
		if spent+wait > budget || (opts.Attempts > 0 && res.Attempts >= opts.Attempts) {
			return res, fmt.Errorf("gitstate: sync %s: %s kept moving: gave up after %d attempts in %s: %w",
				remote, remote, res.Attempts, spent.Round(time.Second), ErrPushRejected)
		}
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "git codex: %s moved while we synced; trying again in %s (attempt %d)\n",
				remote, wait.Round(10*time.Millisecond), res.Attempts+1)
		}
		w.announce(ctx, s, remote, adv[RefState])
		select {
		case <-ctx.Done():
			return res, fmt.Errorf("gitstate: sync %s: %w", remote, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// syncIndexBlocks is how many 1 KiB blocks of the big pack indexes a
// sync's reads may hold, until it ends: 16 MiB, the indexes of ~600,000
// objects (a week or so of a busy team's state). Its checks look up a
// day's ~40,000 new objects and the trees they change, scattered over the
// indexes, which the 512 blocks a long-lived process keeps cannot hold
// (gitrepo.Objects.WidenIndexCache).
const syncIndexBlocks = 16 << 10

// widenIndexCache is gitrepo.Objects.WidenIndexCache under objMu.
func (s *Store) widenIndexCache(blocks int) (restore func()) {
	s.objMu.Lock()
	r := s.objects.WidenIndexCache(blocks)
	s.objMu.Unlock()
	return func() {
		s.objMu.Lock()
		r()
		s.objMu.Unlock()
	}
}

// retryPause is the pause before round attempt+1 of a sync whose push the
// remote rejected: exponential backoff (100 ms doubling, at most 3.2 s)
// with full jitter, so clones that keep colliding fall out of step and a
// quick round fits between a busy peer's pushes.
func retryPause(attempt int) time.Duration {
	ceil := 100 * time.Millisecond << min(attempt-1, 5)
	return ceil/4 + rand.N(ceil*3/4)
}

// ConfigureRemote adds git codex's refspecs to the remote's fetch and push
// config (once), so plain `git fetch R` brings refs/codex/* and notes, and
// plain `git push R` publishes them. A remote without push refspecs also gets
// "HEAD", so `git push R` keeps pushing the current branch as before.
func (s *Store) ConfigureRemote(ctx context.Context, remote string) error {
	if err := s.git(ctx, nil, "remote", "get-url", remote); err != nil {
		return fmt.Errorf("gitstate: no remote %q (add it with `git remote add`): %w", remote, ErrRemote)
	}
	ensure := func(key string, values ...string) error {
		var out bytes.Buffer
		s.git(ctx, &out, "config", "--get-all", key) // exit 1 when unset
		have := strings.Fields(out.String())
		for _, v := range values {
			if contains(have, v) {
				continue
			}
			if err := s.git(ctx, nil, "config", "--add", key, v); err != nil {
				return err
			}
			have = append(have, v)
		}
		return nil
	}
	if err := ensure("remote."+remote+".fetch", FetchRefspecs(remote)...); err != nil {
		return err
	}
	var out bytes.Buffer
	s.git(ctx, &out, "config", "--get-all", "remote."+remote+".push")
	push := PushRefspecs()
	if strings.TrimSpace(out.String()) == "" {
		push = append([]string{"HEAD"}, push...)
	}
	return ensure("remote."+remote+".push", push...)
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// checkNotes checks every notes ref the remote advertised, as fetched,
// before any is merged: it must be a commit whose tree holds notes only
// (named by hashes, git's fan-out, bounded sizes) and follows git's rules
// (checkShape, reading only what differs from the local notes). A blob or
// a malformed tree there fails with ErrInvalidState naming the ref.
func (s *Store) checkNotes(ctx context.Context, remote string, adv advertised) error {
	for ref := range adv {
		if !strings.HasPrefix(ref, NotesPrefix) {
			continue
		}
		h, ok, err := gitrepo.ReadRef(s.commonDir, trackingRef(remote, ref))
		if err != nil || !ok {
			return errors.Join(err, fmt.Errorf("gitstate: %s was not fetched", ref))
		}
		cur, ok, err := gitrepo.ReadRef(s.commonDir, ref)
		if err != nil {
			return err
		}
		if ok && cur == h {
			continue
		}
		if err := s.checkType(h, plumbing.CommitObject); err != nil {
			return fmt.Errorf("gitstate: %w: the remote's %s: %v", ErrInvalidState, ref, err)
		}
		var from plumbing.Hash
		if ok {
			c, err := s.readCommit(cur)
			if err != nil {
				return err
			}
			from = c.TreeHash
		}
		c, err := s.readCommit(h)
		if err != nil {
			return fmt.Errorf("gitstate: %w: the remote's %s: %v", ErrInvalidState, ref, err)
		}
		if err := s.checkShape(from, c.TreeHash, notesSlot); err != nil {
			return fmt.Errorf("%w (in the remote's %s)", err, ref)
		}
	}
	return nil
}

// pruneNotes deletes the remote-tracking notes refs of notes refs the
// remote no longer has, so a notes ref removed there (say one that was
// refused) is not merged again from a stale copy.
func (s *Store) pruneNotes(ctx context.Context, remote string, adv advertised) error {
	fetched, err := gitrepo.ListRefs(s.commonDir, remoteDir(remote)+"notes/")
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for ref := range adv {
		have[trackingRef(remote, ref)] = true
	}
	for _, ref := range fetched {
		if have[ref] {
			continue
		}
		if err := s.git(ctx, nil, "update-ref", "-d", ref); err != nil {
			return fmt.Errorf("gitstate: prune %s: %w", ref, err)
		}
	}
	return nil
}

package gitstate

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// Commit describes a state commit a transaction wrote.
type Commit struct {
	Hash   string
	Parent string // "" for the first commit
	Tree   string
	Clock  Clock
	Time   time.Time
	// Ref is where the commit went: RefState, or for a call that changed
	// nothing this machine's reads ref of the day (see ReadsPrefix).
	Ref string
	// UndoErrors are the failures of the transaction's abort hooks when it
	// was discarded but still committed (its audit record): the caller
	// reports them, e.g. in one more audit commit.
	UndoErrors []error
}

// View runs fn on a read-only snapshot of the tip. It takes no lock: the tip
// is read once and the objects it names never change.
func (s *Store) View(ctx context.Context, fn func(*Snapshot) error) error {
	tip, ok, err := gitrepo.ReadRef(s.commonDir, RefState)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("gitstate: %s: %w", RefState, ErrNotInitialized)
	}
	sn, err := s.snapshotAt(tip)
	if err != nil {
		return err
	}
	return fn(sn)
}

// ViewAt runs fn on a snapshot of a past commit, named by any revision git
// understands ("abc123", "refs/codex/state~5").
func (s *Store) ViewAt(ctx context.Context, rev string, fn func(*Snapshot) error) error {
	h, err := s.resolve(ctx, rev)
	if err != nil {
		return err
	}
	sn, err := s.snapshotAt(h)
	if err != nil {
		return err
	}
	return fn(sn)
}

// resolve turns a revision into a commit hash: full hashes directly, anything
// else through `git rev-parse`.
func (s *Store) resolve(ctx context.Context, rev string) (plumbing.Hash, error) {
	if plumbing.IsHash(rev) {
		h := plumbing.NewHash(rev)
		if _, err := s.readCommit(h); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("gitstate: %s is not a commit here: %w", rev, ErrNotFound)
		}
		return h, nil
	}
	if rev == "" || rev == RefState {
		tip, ok, err := gitrepo.ReadRef(s.commonDir, RefState)
		if err == nil && !ok {
			err = fmt.Errorf("gitstate: %s: %w", RefState, ErrNotInitialized)
		}
		return tip, err
	}
	if strings.HasPrefix(rev, ReadsPrefix) {
		// a log with reads names every reads ref: no git process each
		if h, ok, err := gitrepo.ReadRef(s.commonDir, rev); err == nil && ok {
			return h, nil
		}
	}
	out, err := exec.CommandContext(ctx, "git", "--git-dir", s.commonDir, "rev-parse", "--verify", "--quiet", rev+"^{commit}").Output()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("gitstate: %q names no commit: %w", rev, ErrNotFound)
	}
	return plumbing.NewHash(strings.TrimSpace(string(out))), nil
}

func (s *Store) snapshotAt(h plumbing.Hash) (*Snapshot, error) {
	sn := &Snapshot{s: s, commit: h, trees: map[plumbing.Hash]*gitrepo.Tree{}}
	if h.IsZero() {
		return sn, nil
	}
	// a snapshot is an operation: what the object cache holds that the
	// last operations did not read ages out (gitrepo's objcache.go)
	s.objMu.Lock()
	s.objects.Age()
	s.objMu.Unlock()
	c, err := s.readCommit(h)
	if err != nil {
		return nil, err
	}
	sn.root, sn.clock, sn.when = c.TreeHash, clockOf(c.Message), c.Committer.When
	return sn, nil
}

// Update runs one transaction: fn reads and writes through tx, and what it
// leaves becomes one commit on RefState, moved atomically. If fn returns an
// error nothing is committed and the abort hooks run; to record a refusal
// (an audit commit without state changes) fn calls tx.Discard and returns
// nil. Writers of the same repository, in this process or others, queue.
func (s *Store) Update(ctx context.Context, fn func(*Tx) error) (Commit, error) {
	return s.update(ctx, false, fn)
}

// Init writes the first state commit. It fails with ErrAlreadyInitialized if
// the state ref exists.
func (s *Store) Init(ctx context.Context, fn func(*Tx) error) (Commit, error) {
	return s.update(ctx, true, fn)
}

func (s *Store) update(ctx context.Context, init bool, fn func(*Tx) error) (Commit, error) {
	if err := ctx.Err(); err != nil {
		return Commit{}, err
	}
	if !init {
		// Refuse before taking the writer lock, which would create
		// <git dir>/codex/ in a repository that never ran init.
		if _, ok, err := gitrepo.ReadRef(s.commonDir, RefState); err == nil && !ok {
			return Commit{}, fmt.Errorf("gitstate: %s: %w", RefState, ErrNotInitialized)
		}
	}
	if err := s.lockWriter(); err != nil {
		return Commit{}, err
	}
	s.phase("locked")
	c, tx, err := s.updateLocked(init, fn)
	s.unlockWriter()
	s.phase("unlocked")
	if tx != nil {
		// undo outside the lock: a worktree removal must not hold up
		// every other writer.
		undoErrs := tx.runUndo(ctx)
		if err != nil {
			return Commit{}, errors.Join(append([]error{err}, undoErrs...)...)
		}
		c.UndoErrors = undoErrs
	}
	if err == nil {
		// a read advances no clock: only state commits count towards
		// git's periodic maintenance
		s.maintain(ctx, c.Clock, c.Ref == RefState)
	}
	s.phase("maintained")
	return c, err
}

// updateLocked runs one transaction under the writer lock. It returns the
// transaction (once there is one) so that update can run its abort hooks
// after releasing the lock.
func (s *Store) updateLocked(init bool, fn func(*Tx) error) (Commit, *Tx, error) {
	tip, ok, err := gitrepo.ReadRef(s.commonDir, RefState)
	if err != nil {
		return Commit{}, nil, err
	}
	if init && ok {
		return Commit{}, nil, fmt.Errorf("gitstate: %s: %w", RefState, ErrAlreadyInitialized)
	}
	if !init && !ok {
		return Commit{}, nil, fmt.Errorf("gitstate: %s: %w", RefState, ErrNotInitialized)
	}
	base, err := s.snapshotAt(tip)
	if err == nil {
		err = s.topLevelReads(base)
	}
	if errors.Is(err, ErrObjectMissing) {
		return Commit{}, nil, s.unreadable(tip, err)
	}
	if err != nil {
		return Commit{}, nil, err
	}
	tx := &Tx{base: base, pending: map[string][]byte{}, clock: base.clock.Next(), now: s.now()}
	s.phase("base")
	err = fn(tx)
	s.phase("fn")
	// A read that found an object of the tip gone means the state has a
	// hole: never commit on top of it, not even a refusal.
	if base.missing != nil {
		tx.abort()
		return Commit{}, tx, s.unreadable(tip, base.missing)
	}
	if err != nil {
		tx.abort()
		return Commit{}, tx, err
	}
	if tx.meta == nil {
		tx.abort()
		return Commit{}, tx, ErrNoMeta
	}
	c, err := s.commit(tx, tip)
	if errors.Is(err, ErrObjectMissing) {
		err = s.unreadable(tip, err)
	}
	if err != nil {
		tx.abort()
		return Commit{}, tx, err
	}
	return c, tx, nil
}

// topLevelReads checks, cheaply, that the tip's root tree and the objects it
// names directly are there; deeper holes are found when a read meets them
// (Snapshot.missing). A full check would cost the state's size on every
// call.
func (s *Store) topLevelReads(sn *Snapshot) error {
	if sn.root.IsZero() {
		return nil
	}
	t, err := sn.tree(sn.root)
	if err != nil {
		return err
	}
	for _, e := range t.Entries {
		if err := s.hasObject(e.Hash); err != nil {
			return sn.note(err)
		}
	}
	return nil
}

func (s *Store) commit(tx *Tx, tip plumbing.Hash) (Commit, error) {
	var objs gitrepo.Batch
	root, err := tx.build(&objs)
	if err != nil {
		return Commit{}, err
	}
	if s.recordsNothing(tx, tip, root) {
		return s.commitRead(tx, tip, root, &objs)
	}
	committer := gitrepo.Signature{Name: s.opts.Committer.Name, Email: s.opts.Committer.Email, When: tx.now}
	author := committer
	if a := tx.meta.Author; a.Name != "" {
		author = gitrepo.Signature{Name: a.Name, Email: a.Email, When: tx.now}
	}
	meta := *tx.meta
	meta.Trailers = append(meta.Trailers[:len(meta.Trailers):len(meta.Trailers)], tx.trailers...)
	c := &gitrepo.Commit{
		Author:    author,
		Committer: committer,
		Message:   meta.message(tx.clock),
		TreeHash:  root,
	}
	if !tip.IsZero() {
		c.ParentHashes = []plumbing.Hash{tip}
	}
	c.ParentHashes = append(c.ParentHashes, tx.merged...)
	h, err := objs.Encode(plumbing.CommitObject, c)
	if err != nil {
		return Commit{}, err
	}
	s.phase("built")
	if err := s.writeObjects(&objs); err != nil {
		return Commit{}, err
	}
	if err := s.writeSideRefs(tx); err != nil {
		return Commit{}, err
	}
	if err := s.swapRef(RefState, tip, h); err != nil {
		return Commit{}, err
	}
	s.phase("ref")
	out := Commit{Hash: h.String(), Tree: root.String(), Clock: tx.clock, Time: tx.now, Ref: RefState}
	if !tip.IsZero() {
		out.Parent = tip.String()
	}
	return out, nil
}

func (s *Store) readBlob(h plumbing.Hash) ([]byte, error) {
	s.objMu.Lock()
	defer s.objMu.Unlock()
	return s.objects.Blob(h)
}

func (s *Store) readTree(h plumbing.Hash) (*gitrepo.Tree, error) {
	s.objMu.Lock()
	defer s.objMu.Unlock()
	return s.objects.Tree(h)
}

func (s *Store) readCommit(h plumbing.Hash) (*gitrepo.Commit, error) {
	s.objMu.Lock()
	defer s.objMu.Unlock()
	return s.objects.Commit(h)
}

// writeObjects stores a transaction's or a merge's new objects as one pack.
func (s *Store) writeObjects(b *gitrepo.Batch) error {
	s.objMu.Lock()
	defer s.objMu.Unlock()
	return s.objects.Write(b)
}

func (s *Store) readRaw(t plumbing.ObjectType, h plumbing.Hash) ([]byte, error) {
	s.objMu.Lock()
	defer s.objMu.Unlock()
	return s.objects.Read(t, h)
}

func (s *Store) objectSize(h plumbing.Hash) (int64, error) {
	s.objMu.Lock()
	defer s.objMu.Unlock()
	return s.objects.Size(h)
}

package gitstate

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// UnreadableError is why a transaction refused to build on the tip: an
// object of the state is missing (issue 16 item 11: `git gc --prune=now`
// beside writers pruned a subtree of the tip, and later calls went on
// committing on top of the hole). Nothing is written; LastReadable names the
// newest commit along the first parents whose whole state reads, for
// `git codex init --restore`.
type UnreadableError struct {
	Tip          string
	Err          error
	LastReadable string // "" when none was found within the search's budget
	Behind       int    // how many commits before the tip it is
}

func (e *UnreadableError) Error() string {
	msg := fmt.Sprintf("the state at %s cannot be read (%v); nothing was written", short(e.Tip), e.Err)
	if e.LastReadable == "" {
		return msg + "; no readable state was found in the recent history: see `git fsck` for what is missing, or start afresh"
	}
	return fmt.Sprintf("%s; the last state that reads whole is %s, %d call(s) before the tip: restore it with `git codex init --restore %s` (the calls after it are lost with the missing objects)",
		msg, short(e.LastReadable), e.Behind, e.LastReadable)
}

func (e *UnreadableError) Unwrap() error { return e.Err }

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// lastReadable budget: the search runs only on the error path, but a big
// state takes a while to check whole.
const (
	readableMaxCommits = 64
	readableMaxTime    = 3 * time.Second
)

// unreadable builds the error for a tip whose state has a missing object.
func (s *Store) unreadable(tip plumbing.Hash, err error) error {
	e := &UnreadableError{Tip: tip.String(), Err: err}
	e.LastReadable, e.Behind = s.lastReadable(tip)
	return e
}

// lastReadable walks first parents back from tip to the newest commit whose
// whole state reads.
func (s *Store) lastReadable(tip plumbing.Hash) (string, int) {
	deadline := time.Now().Add(readableMaxTime)
	h := tip
	for n := 0; n < readableMaxCommits && time.Now().Before(deadline); n++ {
		c, err := s.readCommit(h)
		if err != nil {
			return "", 0
		}
		if n > 0 && s.wholeState(c.TreeHash) == nil {
			return h.String(), n
		}
		if len(c.Parents()) == 0 {
			return "", 0 // a root, or the boundary of a shallow fetch
		}
		h = c.ParentHashes[0]
	}
	return "", 0
}

// wholeState checks that every tree and blob of a state is in the object
// store.
func (s *Store) wholeState(root plumbing.Hash) error {
	t, err := s.readTree(root)
	if err != nil {
		return err
	}
	for _, e := range t.Entries {
		if e.Mode == filemode.Dir {
			if err := s.wholeState(e.Hash); err != nil {
				return err
			}
			continue
		}
		if err := s.hasObject(e.Hash); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) hasObject(h plumbing.Hash) error {
	s.objMu.Lock()
	defer s.objMu.Unlock()
	return s.objects.Has(h)
}

// LostState is a state commit no ref names any more, found by FindLostState.
type LostState struct {
	Commit  string
	Clock   Clock
	Time    time.Time
	Summary string
}

// FindLostState looks for the state of a repository whose refs/codex/state
// was deleted by hand (issue 16 item 12): the newest commit git codex wrote
// (it carries a Codex-Clock trailer) that the reflog of the ref or the
// unreachable objects still hold. It searches only where git codex has run
// before (<git dir>/codex exists): `git fsck` reads the whole object store,
// too slow for a first init in a big repository. ok is false when nothing
// was found.
func (s *Store) FindLostState(ctx context.Context) (LostState, bool, error) {
	if _, ok, err := gitrepo.ReadRef(s.commonDir, RefState); err != nil || ok {
		return LostState{}, false, err
	}
	if _, err := os.Stat(filepath.Join(s.commonDir, "codex")); err != nil {
		return LostState{}, false, nil
	}
	var candidates []plumbing.Hash
	if b, err := os.ReadFile(filepath.Join(s.commonDir, "logs", filepath.FromSlash(RefState))); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && plumbing.IsHash(f[1]) {
				candidates = append(candidates, plumbing.NewHash(f[1]))
			}
		}
	}
	// (the lost tip is "dangling", the commits before it "unreachable")
	out, err := exec.CommandContext(ctx, "git", "--git-dir", s.commonDir, "fsck", "--unreachable", "--no-reflogs", "--no-progress").Output()
	if err != nil && len(out) == 0 {
		return LostState{}, false, fmt.Errorf("gitstate: git fsck --unreachable: %w", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 3 && (f[0] == "unreachable" || f[0] == "dangling") && f[1] == "commit" {
			candidates = append(candidates, plumbing.NewHash(f[2]))
		}
	}
	var best LostState
	var bestAt time.Time
	for _, h := range candidates {
		c, err := s.readCommit(h)
		if err != nil || !strings.Contains(c.Message, "\n"+TrailerTool+": ") || !strings.Contains(c.Message, "\n"+TrailerClock+": ") {
			continue
		}
		clock := clockOf(c.Message)
		if best.Commit == "" || clock > best.Clock || (clock == best.Clock && c.Committer.When.After(bestAt)) {
			best = LostState{Commit: h.String(), Clock: clock, Time: c.Committer.When, Summary: firstLine(c.Message)}
			bestAt = c.Committer.When
		}
	}
	return best, best.Commit != "", nil
}

// Restore makes the state of commit rev current again: a new commit with
// its tree, whose parent is rev, at a clock above both rev's and the tip's.
// It is for a state ref that was deleted (then it is recreated) or whose tip
// no longer reads whole (then the unreadable commits are left behind: their
// objects are gone). It fails with ErrAlreadyInitialized when the tip reads
// whole: nothing needs restoring. The restored state must itself read whole.
func (s *Store) Restore(ctx context.Context, rev string, meta Meta) (Commit, error) {
	h, err := s.resolve(ctx, rev)
	if err != nil {
		return Commit{}, err
	}
	if err := s.lockWriter(); err != nil {
		return Commit{}, err
	}
	defer s.unlockWriter()
	from, err := s.readCommit(h)
	if err != nil {
		return Commit{}, err
	}
	if !strings.Contains(from.Message, "\n"+TrailerClock+": ") {
		return Commit{}, fmt.Errorf("gitstate: %s is not a git codex state commit: %w", short(h.String()), ErrNotFound)
	}
	if err := s.wholeState(from.TreeHash); err != nil {
		return Commit{}, fmt.Errorf("gitstate: the state at %s does not read whole either: %w", short(h.String()), err)
	}
	tip, ok, err := gitrepo.ReadRef(s.commonDir, RefState)
	if err != nil {
		return Commit{}, err
	}
	clock := clockOf(from.Message)
	if ok {
		tc, err := s.readCommit(tip)
		if err == nil && s.wholeState(tc.TreeHash) == nil {
			return Commit{}, fmt.Errorf("gitstate: %s at %s reads whole, nothing to restore: %w", RefState, short(tip.String()), ErrAlreadyInitialized)
		}
		if err == nil && clockOf(tc.Message) > clock {
			clock = clockOf(tc.Message)
		}
	}
	clock = clock.Next()
	now := s.now()
	committer := gitrepo.Signature{Name: s.opts.Committer.Name, Email: s.opts.Committer.Email, When: now}
	author := committer
	if a := meta.Author; a.Name != "" {
		author = gitrepo.Signature{Name: a.Name, Email: a.Email, When: now}
	}
	c := &gitrepo.Commit{Author: author, Committer: committer, Message: meta.message(clock), TreeHash: from.TreeHash, ParentHashes: []plumbing.Hash{h}}
	batch := &gitrepo.Batch{}
	nh, err := batch.Encode(plumbing.CommitObject, c)
	if err != nil {
		return Commit{}, err
	}
	if err := s.writeObjects(batch); err != nil {
		return Commit{}, err
	}
	if err := s.swapRef(RefState, tip, nh); err != nil {
		return Commit{}, err
	}
	return Commit{Hash: nh.String(), Parent: h.String(), Tree: from.TreeHash.String(), Clock: clock, Time: now}, nil
}

// firstLine is a commit message's summary line.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

package gitstate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// Validator checks one record that a merge would bring in from elsewhere.
// It returns an error for content the local tools could not read, so a
// malformed or hostile remote state never becomes the local one.
type Validator func(path string, data []byte) error

// ErrInvalidState means the state fetched from a remote holds records the
// Validator refused; nothing was merged.
var ErrInvalidState = errors.New("remote state holds invalid records")

// maxInvalidListed bounds how many bad paths an error names.
const maxInvalidListed = 10

// validateChange runs validate on every record that differs between the
// trees from and to (added or changed; deletions have nothing to check),
// descending only into subtrees whose hashes differ.
func (s *Store) validateChange(from, to plumbing.Hash, validate Validator) error {
	return validateChangeIn(s, from, to, validate)
}

// validateChangeIn is validateChange reading through r.
func validateChangeIn(r objReader, from, to plumbing.Hash, validate Validator) error {
	if validate == nil || from == to {
		return nil
	}
	var bad []string
	var walk func(path string, from, to plumbing.Hash) error
	walk = func(path string, from, to plumbing.Hash) error {
		old := map[string]gitrepo.TreeEntry{}
		if !from.IsZero() {
			t, err := r.readTree(from)
			if err != nil {
				return err
			}
			for _, e := range t.Entries {
				old[e.Name] = e
			}
		}
		t, err := r.readTree(to)
		if err != nil {
			return err
		}
		for _, e := range t.Entries {
			prev, had := old[e.Name]
			if had && prev.Hash == e.Hash && prev.Mode == e.Mode {
				continue
			}
			p := e.Name
			if path != "" {
				p = path + "/" + e.Name
			}
			if e.Mode == filemode.Dir {
				var sub plumbing.Hash
				if had && prev.Mode == filemode.Dir {
					sub = prev.Hash
				}
				if err := walk(p, sub, e.Hash); err != nil {
					return err
				}
				continue
			}
			data, err := r.readBlob(e.Hash)
			if err != nil {
				return err
			}
			if verr := validate(p, data); verr != nil {
				bad = append(bad, p+" ("+verr.Error()+")")
			}
		}
		return nil
	}
	if err := walk("", from, to); err != nil {
		return err
	}
	if len(bad) == 0 {
		return nil
	}
	more := ""
	if len(bad) > maxInvalidListed {
		more = fmt.Sprintf(" and %d more", len(bad)-maxInvalidListed)
		bad = bad[:maxInvalidListed]
	}
	return fmt.Errorf("gitstate: %w: %s%s", ErrInvalidState, strings.Join(bad, "; "), more)
}

// validateCommits is validateChange between two commits' trees (from may be
// the zero hash: no state yet), reading the trees and records through r.
func (s *Store) validateCommits(r objReader, from, to plumbing.Hash, validate Validator) error {
	if validate == nil {
		return nil
	}
	var trees [2]plumbing.Hash
	for i, h := range []plumbing.Hash{from, to} {
		if h.IsZero() {
			continue
		}
		c, err := s.readCommit(h)
		if err != nil {
			return err
		}
		trees[i] = c.TreeHash
	}
	return validateChangeIn(r, trees[0], trees[1], validate)
}

// checkType checks that h names an object of type want (a ref a remote
// advertises can point at anything: a blob, a tree).
// Its size is read first, so a huge object there is refused unread.
func (s *Store) checkType(h plumbing.Hash, want plumbing.ObjectType) error {
	size, err := s.objectSize(h)
	if err != nil {
		return fmt.Errorf("object %s cannot be read: %v", h, err)
	}
	if size > maxRefTarget {
		return fmt.Errorf("object %s has %d bytes, not a %s git codex wrote", h, size, want)
	}
	s.objMu.Lock()
	typ, err := s.objects.TypeOf(h)
	s.objMu.Unlock()
	if err != nil {
		return fmt.Errorf("object %s cannot be read: %v", h, err)
	}
	if typ != want {
		return fmt.Errorf("%s is a %s, not a %s", h, typ, want)
	}
	return nil
}

// maxRefTarget bounds the size of what a fetched ref may point at: a
// commit is a few kilobytes.
const maxRefTarget = 1 << 20

// checkIncoming checks what a merge of the commit theirs, n commits ahead
// of ours (zero: no local state yet), would bring in, before anything of it is used: its
// clock (checkClock) and its tree's shape (checkShape against layout, its
// trees read through r).
func (s *Store) checkIncoming(r objReader, ours, theirs plumbing.Hash, n uint64, layout *Layout) error {
	if err := s.checkClock(ours, theirs, n); err != nil {
		return err
	}
	var from plumbing.Hash
	if !ours.IsZero() {
		c, err := s.readCommit(ours)
		if err != nil {
			return err
		}
		from = c.TreeHash
	}
	c, err := s.readCommit(theirs)
	if err != nil {
		return fmt.Errorf("gitstate: %w: %v", ErrInvalidState, err)
	}
	return checkShapeIn(r, from, c.TreeHash, layout.slotAt)
}

// checkClock refuses an incoming commit whose clock is further ahead of
// ours than its history can explain (n is the number of its commits we do
// not have). Every commit git codex writes has a
// clock one more than the largest of its parents', so a commit n commits
// ahead of everything we have is at most our clock plus n. A peer that
// writes a larger one (say the largest uint64) would pin the clock of every
// later commit on every clone, and ordering would fall back to tie-breaks.
// Clocks inside the incoming history are not read: merges witness only the
// two tips (mergeCommit), so no buried clock reaches a later commit.
func (s *Store) checkClock(ours, theirs plumbing.Hash, n uint64) error {
	tc, err := s.readCommit(theirs)
	if err != nil {
		return fmt.Errorf("gitstate: %w: %v", ErrInvalidState, err)
	}
	clock := clockOf(tc.Message)
	var local Clock
	if !ours.IsZero() {
		oc, err := s.readCommit(ours)
		if err != nil {
			return err
		}
		local = clockOf(oc.Message)
	}
	// a shallow history starts at its boundary's clocks, not at 0
	boundary, err := s.boundaryClock()
	if err != nil {
		return err
	}
	local = local.Witness(boundary)
	bound := local + Clock(n)
	if bound < local { // saturate
		bound = ^Clock(0)
	}
	if clock > bound {
		return fmt.Errorf("gitstate: %w: commit %s has clock %d, but it is %d commit(s) ahead of the local clock %d, so at most %d",
			ErrInvalidState, theirs, clock, n, local, bound)
	}
	return nil
}

// dropsKept reports whether moving from the commit ours to the commit
// theirs would delete records of a directory the layout keeps: then a
// fast-forward would lose what no tool can delete, and the sync merges
// instead (mergeKept). It reads only subtrees that differ.
func (s *Store) dropsKept(ctx context.Context, ours, theirs plumbing.Hash, layout *Layout, archived *archivedIndex) (bool, error) {
	var trees [2]plumbing.Hash
	for i, h := range []plumbing.Hash{ours, theirs} {
		c, err := s.readCommit(h)
		if err != nil {
			return false, err
		}
		trees[i] = c.TreeHash
	}
	deleter := theirs // the side whose deletions an archive must explain
	var walk func(parts []string, o, t plumbing.Hash) (bool, error)
	walk = func(parts []string, o, t plumbing.Hash) (bool, error) {
		if o == t || !layout.keeps(parts) {
			return false, nil
		}
		ot, err := s.readTree(o)
		if err != nil {
			return false, err
		}
		tt, err := s.readTree(t)
		if err != nil {
			return false, err
		}
		theirs := map[string]gitrepo.TreeEntry{}
		for _, e := range tt.Entries {
			theirs[e.Name] = e
		}
		for _, e := range ot.Entries {
			te, ok := theirs[e.Name]
			switch {
			case !ok:
				// gone: a drop, unless an archive holds it (retention)
				if gone, err := archivedDrop(archived, append(parts[:len(parts):len(parts)], e.Name), e, ours, deleter); err != nil || !gone {
					return !gone, err
				}
			case (e.Mode == filemode.Dir) != (te.Mode == filemode.Dir):
				return true, nil
			case e.Mode == filemode.Dir && te.Hash != e.Hash:
				if drops, err := walk(append(parts[:len(parts):len(parts)], e.Name), e.Hash, te.Hash); err != nil || drops {
					return drops, err
				}
			}
		}
		return false, nil
	}
	return walk(nil, trees[0], trees[1])
}

// IncomingCommit is a commit a merge would bring in from elsewhere, as a
// CommitValidator sees it.
type IncomingCommit struct {
	Hash        string
	Author      Signature
	Committer   Signature
	Summary     string
	Trailers    []Trailer
	Clock       Clock
	ParentCount int
}

// CommitValidator checks one incoming commit (its message already passed
// the store's own checks, checkCommitMessage) against the rules of the
// tools that wrote it; an error refuses the whole merge.
type CommitValidator func(c IncomingCommit) error

// maxCommitMessage bounds an incoming commit's message: git codex's are a
// summary and trailers of at most a few kilobytes (Codex-Args is cut at 4 KiB).
const maxCommitMessage = 64 << 10

// checkCommits checks every commit that theirs brings, incoming (those
// reachable from it and not from ours; all of its history when ours is
// zero: aheadBehind lists them), as strictly as checkShape checks its
// tree: each message is what Meta.message writes (checkCommitMessage),
// each author and committer well-formed, and then validate, if set. A NUL
// in a message made every later push to a remote with receive.fsckObjects
// fail; a Codex-Clock that is not a number made the next local write
// restart the clock at 1.
func (s *Store) checkCommits(incoming []string, validate CommitValidator) error {
	return checkCommitsIn(func(h plumbing.Hash) (*gitrepo.Commit, error) {
		s.objMu.Lock()
		defer s.objMu.Unlock()
		return s.objects.Objects.Commit(h)
	}, incoming, validate)
}

// asideCommits is the number of incoming commits from which a merge
// checks them on a reader of its own beside its other checks
// (checkCommitsAside): a day's sync brings ~5,000, whose reading is a
// third of the merge's checks.
const asideCommits = 256

// checkCommitsAside runs checkCommits on a reader of its own, in a
// goroutine, so that a merge's other checks (checkIncoming, dropsKept,
// validateCommits), which read trees and records through the store's
// reader, run beside it on the machine's other CPU. It returns the wait
// for its verdict, which may be called any number of times. Below
// asideCommits it checks them here, at once.
func (s *Store) checkCommitsAside(incoming []string, validate CommitValidator) (wait func() error) {
	if len(incoming) < asideCommits {
		err := s.checkCommits(incoming, validate)
		return func() error { return err }
	}
	done := make(chan error, 1)
	r := s.openAside()
	go func() {
		defer r.close()
		done <- checkCommitsIn(r.readCommit, incoming, validate)
	}()
	return sync.OnceValue(func() error { return <-done })
}

// treeVerdicts are the verdicts of a merge's checks of the incoming tree:
// checkIncoming's and, when they were asked for, validateCommits'.
type treeVerdicts struct{ incoming, validate error }

// checkTreesAside runs checkIncoming and then, if alsoValidate (the merge
// looks like a fast-forward, whose records are validated as they come)
// and it passed, validateCommits with validate, on a reader of their own
// in a goroutine, so that dropsKept, which reads through the store's
// reader (and with it the record archives' index, which stays on the
// merge's goroutine), runs beside them on the machine's other CPU: a
// day-behind sync's checkShape and validators ~0.14 s of CPU, its
// dropsKept ~0.15 s (docs/PERFORMANCE.md, "The day-behind sync side by
// side on two CPUs"). A verdict of the validators that the merge does not
// use (dropsKept turned it into a merge) is dropped.
// The validators still see only a tree whose shape passed: they run after
// checkIncoming, on the same goroutine. It returns the wait for the
// verdicts, which may be called any number of times, and whether they
// are checked aside (false: checked already). Below asideCommits
// incoming commits it checks here, at once, on the store's reader: a small
// merge's checks cost less than a reader's start.
func (s *Store) checkTreesAside(ours, theirs plumbing.Hash, n uint64, layout *Layout, validate Validator, alsoValidate bool) (wait func() treeVerdicts, aside bool) {
	run := func(r objReader) (v treeVerdicts) {
		if v.incoming = s.checkIncoming(r, ours, theirs, n, layout); v.incoming == nil && alsoValidate {
			v.validate = s.validateCommits(r, ours, theirs, validate)
		}
		return v
	}
	if n < asideCommits {
		v := run(s)
		return func() treeVerdicts { return v }, false
	}
	done := make(chan treeVerdicts, 1)
	r := s.openAside()
	go func() {
		defer r.close()
		done <- run(r)
	}()
	return sync.OnceValue(func() treeVerdicts { return <-done }), true
}

// checkCommitsIn checks the incoming commits, read by read.
func checkCommitsIn(read func(plumbing.Hash) (*gitrepo.Commit, error), incoming []string, validate CommitValidator) error {
	var bad []string
	for _, id := range incoming {
		h := plumbing.NewHash(id)
		// the object as it is: these checks read no parents, so the
		// shallow file (a stat a commit through readCommit) is not asked
		c, err := read(h)
		if err != nil {
			return fmt.Errorf("gitstate: %w: commit %s: %v", ErrInvalidState, id, err)
		}
		err = checkCommitMessage(c.Message)
		if err == nil {
			err = checkSignature("author", c.Author)
		}
		if err == nil {
			err = checkSignature("committer", c.Committer)
		}
		if err == nil && validate != nil {
			m := parseMessage(c.Message)
			err = validate(IncomingCommit{Hash: id, Author: Signature{Name: c.Author.Name, Email: c.Author.Email},
				Committer: Signature{Name: c.Committer.Name, Email: c.Committer.Email},
				Summary:   m.Summary, Trailers: m.Trailers, Clock: clockOf(c.Message), ParentCount: len(c.ParentHashes)})
		}
		if err != nil {
			bad = append(bad, "commit "+id+": "+err.Error())
			if len(bad) > maxInvalidListed {
				break
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	more := ""
	if len(bad) > maxInvalidListed {
		more, bad = " and more", bad[:maxInvalidListed]
	}
	return fmt.Errorf("gitstate: %w: %s%s", ErrInvalidState, strings.Join(bad, "; "), more)
}

// checkCommitMessage checks a message as Meta.message writes it: UTF-8
// text without control characters but line ends (so no NUL), at most
// maxCommitMessage bytes, whose trailers hold exactly one Codex-Clock, a
// number from 1 written in decimal digits only.
func checkCommitMessage(msg string) error {
	if len(msg) > maxCommitMessage {
		return fmt.Errorf("its message has %d bytes; git codex writes at most %d", len(msg), maxCommitMessage)
	}
	if !utf8.ValidString(msg) {
		return errors.New("its message is not UTF-8 text")
	}
	for _, r := range msg {
		if r != '\n' && unicode.IsControl(r) {
			return fmt.Errorf("its message holds the control character %U", r)
		}
	}
	clocks := 0
	for _, line := range strings.Split(msg, "\n") {
		v, ok := strings.CutPrefix(line, TrailerClock+":")
		if !ok {
			continue
		}
		clocks++
		v = strings.TrimPrefix(v, " ")
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n == 0 || strings.TrimLeft(v, "0123456789") != "" {
			return fmt.Errorf("its %s %q is not a clock (a number from 1)", TrailerClock, v)
		}
	}
	if clocks != 1 {
		return fmt.Errorf("its message has %d %s trailers; git codex writes one", clocks, TrailerClock)
	}
	return nil
}

// checkSignature checks an author or committer line's name and e-mail:
// UTF-8 text without control characters or angle brackets, a non-empty
// e-mail (git's parser has already split them).
func checkSignature(which string, sig gitrepo.Signature) error {
	for _, s := range []string{sig.Name, sig.Email} {
		if !utf8.ValidString(s) || strings.ContainsAny(s, "<>") || strings.IndexFunc(s, unicode.IsControl) >= 0 {
			return fmt.Errorf("its %s %q <%s> is not a name and an e-mail git codex writes", which, sig.Name, sig.Email)
		}
	}
	if sig.Email == "" {
		return fmt.Errorf("its %s has no e-mail", which)
	}
	return nil
}

package gitstate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
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
	if validate == nil || from == to {
		return nil
	}
	var bad []string
	var walk func(path string, from, to plumbing.Hash) error
	walk = func(path string, from, to plumbing.Hash) error {
		old := map[string]gitTreeEntry{}
		if !from.IsZero() {
			t, err := s.readTree(from)
			if err != nil {
				return err
			}
			for _, e := range t.Entries {
				old[e.Name] = e
			}
		}
		t, err := s.readTree(to)
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
			data, err := s.readBlob(e.Hash)
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
// the zero hash: no state yet).
func (s *Store) validateCommits(from, to plumbing.Hash, validate Validator) error {
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
	return s.validateChange(trees[0], trees[1], validate)
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
	obj, err := s.objects.anyType(h)
	s.objMu.Unlock()
	if err != nil {
		return fmt.Errorf("object %s cannot be read: %v", h, err)
	}
	if obj.typ != want {
		return fmt.Errorf("%s is a %s, not a %s", h, obj.typ, want)
	}
	return nil
}

// maxRefTarget bounds the size of what a fetched ref may point at: a
// commit is a few kilobytes.
const maxRefTarget = 1 << 20

// checkIncoming checks what a merge of the commit theirs, n commits ahead
// of ours (zero: no local state yet), would bring in, before anything of it is used: its
// clock (checkClock) and its tree's shape (checkShape against layout).
func (s *Store) checkIncoming(ours, theirs plumbing.Hash, n uint64, layout *Layout) error {
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
	return s.checkShape(from, c.TreeHash, layout.slotAt)
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
func (s *Store) dropsKept(ours, theirs plumbing.Hash, layout *Layout) (bool, error) {
	var trees [2]plumbing.Hash
	for i, h := range []plumbing.Hash{ours, theirs} {
		c, err := s.readCommit(h)
		if err != nil {
			return false, err
		}
		trees[i] = c.TreeHash
	}
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
		theirs := map[string]gitTreeEntry{}
		for _, e := range tt.Entries {
			theirs[e.Name] = e
		}
		for _, e := range ot.Entries {
			te, ok := theirs[e.Name]
			switch {
			case !ok, (e.Mode == filemode.Dir) != (te.Mode == filemode.Dir):
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

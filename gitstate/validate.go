package gitstate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
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
		old := map[string]object.TreeEntry{}
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

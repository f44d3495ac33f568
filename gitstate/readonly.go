package gitstate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// Unwritable reports an error that says the repository cannot be written
// at all (a read-only .git or file system, no permission, a full disk), as
// opposed to a write that lost a race or met bad data.
func Unwritable(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) ||
		errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// ErrWouldWrite is returned by Unrecorded when fn changed the state: it
// cannot be done without a commit.
var ErrWouldWrite = errors.New("the call changes the state")

// Unrecorded runs fn on a transaction over the tip that is never committed
// and takes no lock: for answering a read when the repository cannot be
// written (issue 16 item 12: on a read-only .git every call failed, reads
// too, because every call commits its audit record). If fn wrote anything
// it returns ErrWouldWrite and the abort hooks run.
func (s *Store) Unrecorded(ctx context.Context, fn func(*Tx) error) error {
	tip, ok, err := gitrepo.ReadRef(s.commonDir, RefState)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("gitstate: %s: %w", RefState, ErrNotInitialized)
	}
	base, err := s.snapshotAt(tip)
	if err != nil {
		return err
	}
	tx := &Tx{base: base, pending: map[string][]byte{}, clock: base.clock.Next(), now: s.now()}
	err = fn(tx)
	wrote := len(tx.pending) > 0
	tx.abort()
	if undoErrs := tx.runUndo(ctx); len(undoErrs) > 0 {
		err = errors.Join(append([]error{err}, undoErrs...)...)
	}
	if err != nil {
		return err
	}
	if wrote {
		return ErrWouldWrite
	}
	return nil
}

package gitstate

import (
	"errors"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// Sentinel errors. Callers test them with errors.Is; the wrapped message names
// the path or ref involved.
var (
	// ErrNotRepository means the directory is not inside a git repository.
	ErrNotRepository = errors.New("not a git repository")
	// ErrRepositoryRefused means git refuses the repository (see
	// RefusedError): git codex does not touch it either.
	ErrRepositoryRefused = errors.New("git refuses this repository")
	// ErrNotInitialized means the repository has no refs/codex/state yet;
	// `git codex init` creates it.
	ErrNotInitialized = errors.New("git codex is not initialised in this repository")
	// ErrAlreadyInitialized is returned by Init when the state ref exists.
	ErrAlreadyInitialized = errors.New("git codex is already initialised in this repository")
	// ErrNotFound means no record exists at the path.
	ErrNotFound = errors.New("record not found")
	// ErrInvalidPath rejects record paths that git could not store or that
	// would escape their directory ("", ".", "..", empty components, NUL).
	ErrInvalidPath = errors.New("invalid record path")
	// ErrRefMoved means the ref changed under a compare-and-swap. Writers hold
	// the writer lock, so this only happens when something outside git codex
	// moved the ref.
	ErrRefMoved = errors.New("ref moved concurrently")
	// ErrLockTimeout means "<ref>.lock" stayed held by another program for
	// longer than the store waits.
	ErrLockTimeout = errors.New("timed out waiting for ref lock")
	// ErrNoMeta means a transaction ended without SetMeta: every commit must
	// say what produced it.
	ErrNoMeta = errors.New("transaction has no audit metadata")
	// ErrUnsupportedRepository means the repository's format (SHA-256
	// object names, a reftable) is one git codex cannot write without
	// corrupting it; Open refuses before anything is written.
	ErrUnsupportedRepository = errors.New("repository format not supported")
	// ErrObjectMissing means an object the state names is not in the
	// object store (pruned by `git gc --prune=now` beside a writer, or lost
	// on a disk). Transactions that meet one refuse to commit: see
	// UnreadableError.
	ErrObjectMissing = gitrepo.ErrObjectMissing
)

package gitstate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// Refs that sync moves between machines.
const (
	// NotesPrefix starts every notes ref git codex writes (refs/notes/codex,
	// refs/notes/codex-reviews, ...).
	NotesPrefix = "refs/notes/codex"
	// remotesPrefix holds what was fetched from each remote:
	// refs/codex/remotes/<remote>/state and .../notes/codex*.
	remotesPrefix = "refs/codex/remotes/"
)

// Sync errors.
var (
	// ErrRemote means the remote could not be reached or refused to talk.
	ErrRemote = errors.New("remote unreachable")
	// ErrPushRejected means the remote's state moved since the fetch; sync
	// fetches, merges and pushes again.
	ErrPushRejected = errors.New("push rejected: the remote moved")
)

// RemoteStateRef is where the remote's state is fetched to.
func RemoteStateRef(remote string) string { return remotesPrefix + remote + "/state" }

// FetchRefspecs are the refspecs that carry git codex's refs from remote;
// `git codex remote add` puts them in the remote's config, so plain
// `git fetch` brings them too.
func FetchRefspecs(remote string) []string {
	return []string{
		"+" + RefState + ":" + RemoteStateRef(remote),
		"+" + NotesPrefix + "*:" + remotesPrefix + remote + "/notes/codex*",
	}
}

// PushRefspecs are the refspecs that publish git codex's refs. The state is
// pushed without "+": the remote accepts only fast-forwards, so a state that
// moved there is never overwritten.
func PushRefspecs() []string {
	return []string{RefState + ":" + RefState, NotesPrefix + "*:" + NotesPrefix + "*"}
}

// Fetch brings the remote's state and notes into refs/codex/remotes/<remote>/.
// found is false when the remote has no git codex state. progress, if not
// nil, receives git's progress output.
func (s *Store) Fetch(ctx context.Context, remote string, progress io.Writer) (found bool, err error) {
	var out bytes.Buffer
	if err := s.git(ctx, &out, "ls-remote", remote, RefState, NotesPrefix+"*"); err != nil {
		return false, fmt.Errorf("gitstate: %s: %w: %v", remote, ErrRemote, err)
	}
	var specs []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		switch {
		case f[1] == RefState:
			found = true
			specs = append(specs, FetchRefspecs(remote)[0])
		case strings.HasPrefix(f[1], NotesPrefix):
			specs = append(specs, "+"+f[1]+":"+remotesPrefix+remote+"/notes/"+strings.TrimPrefix(f[1], "refs/notes/"))
		}
	}
	if len(specs) == 0 {
		return false, nil
	}
	args := []string{"fetch", "--no-tags", "--no-write-fetch-head"}
	if progress != nil {
		args = append(args, "--progress")
	} else {
		args = append(args, "--quiet")
	}
	err = s.gitProgress(ctx, progress, append(append(args, remote), specs...)...)
	if err != nil {
		return false, fmt.Errorf("gitstate: fetch %s: %w: %v", remote, ErrRemote, err)
	}
	return found, nil
}

// Push publishes the local state and notes to remote. A remote whose state
// moved since our last fetch rejects the state (not a fast-forward):
// ErrPushRejected.
func (s *Store) Push(ctx context.Context, remote string, progress io.Writer) error {
	specs := []string{RefState + ":" + RefState}
	notes, err := s.localNotes(ctx)
	if err != nil {
		return err
	}
	for _, n := range notes {
		specs = append(specs, n+":"+n)
	}
	args := []string{"push", "--porcelain"}
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
	if strings.Contains(out.String(), "[rejected]") || strings.Contains(out.String(), "[remote rejected]") ||
		strings.Contains(err.Error(), "non-fast-forward") || strings.Contains(err.Error(), "fetch first") {
		return fmt.Errorf("gitstate: push %s: %w", remote, ErrPushRejected)
	}
	return fmt.Errorf("gitstate: push %s: %w: %v", remote, ErrRemote, err)
}

// localNotes lists the notes refs git codex owns.
func (s *Store) localNotes(ctx context.Context) ([]string, error) {
	var out bytes.Buffer
	if err := s.git(ctx, &out, "for-each-ref", "--format=%(refname)", NotesPrefix+"*"); err != nil {
		return nil, err
	}
	return strings.Fields(out.String()), nil
}

// MergeNotes merges each notes ref fetched from remote into the local one
// by union of lines (git's cat_sort_uniq strategy), so notes written on
// either machine survive. A notes ref only the remote has is adopted.
func (s *Store) MergeNotes(ctx context.Context, remote string) error {
	var out bytes.Buffer
	prefix := remotesPrefix + remote + "/notes/"
	if err := s.git(ctx, &out, "for-each-ref", "--format=%(refname) %(objectname)", prefix); err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		local := "refs/notes/" + strings.TrimPrefix(f[0], prefix)
		cur, ok, err := readRef(s.commonDir, local)
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
	// Resolve and Finish are passed to Merge.
	Resolve Resolver
	Finish  MergeFunc
	// Push publishes the merged state; false makes Sync a pull.
	Push bool
	// Progress, if not nil, receives git's progress output.
	Progress io.Writer
	// Attempts bounds fetch-merge-push rounds when the remote keeps moving;
	// 0 means 5.
	Attempts int
}

// SyncResult is what Sync did.
type SyncResult struct {
	Merge    MergeResult
	Found    bool // the remote had git codex state
	Pushed   bool
	Attempts int
}

// Sync fetches the remote's state, merges it into the local state, merges
// notes, and (with Push) publishes the result. A push the remote rejects
// because its state moved meanwhile starts another round. A remote that
// cannot be reached fails with ErrRemote before anything local changes.
func (s *Store) Sync(ctx context.Context, remote string, opts SyncOptions) (SyncResult, error) {
	attempts := opts.Attempts
	if attempts <= 0 {
		attempts = 5
	}
	var res SyncResult
	for res.Attempts < attempts {
		res.Attempts++
		found, err := s.Fetch(ctx, remote, opts.Progress)
		if err != nil {
			return res, err
		}
		res.Found = found
		if found {
			res.Merge, err = s.Merge(ctx, RemoteStateRef(remote), opts.Resolve, opts.Finish)
			if err != nil {
				return res, err
			}
		}
		if err := s.MergeNotes(ctx, remote); err != nil {
			return res, err
		}
		if !opts.Push {
			return res, nil
		}
		if _, ok, err := readRef(s.commonDir, RefState); err != nil || !ok {
			return res, errors.Join(err, fmt.Errorf("gitstate: nothing to push: %w", ErrNotInitialized))
		}
		err = s.Push(ctx, remote, opts.Progress)
		if err == nil {
			res.Pushed = true
			return res, nil
		}
		if !errors.Is(err, ErrPushRejected) {
			return res, err
		}
	}
	return res, fmt.Errorf("gitstate: sync %s: gave up after %d attempts: %w", remote, attempts, ErrPushRejected)
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

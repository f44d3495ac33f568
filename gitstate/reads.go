package gitstate

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
	"github.com/go-git/go-git/v5/plumbing"
)

// Reads and refusals (issue 27). Every call is a git transaction, but a
// call that changes nothing — a read, a refusal — does not need to travel
// to every clone: agents poll, and twenty agents polling every 30 s made
// ~58,000 commits a day on refs/codex/state, almost all of them saying
// "alice read her inbox". So a transaction whose tree is its base's (no
// writes, no merge, no side commit) is committed on this machine's reads
// ref instead:
//
//	refs/codex/reads/<machine>/<yyyy-mm-dd>
//
// one chain per machine (a random id kept in <git dir>/codex/machine) and
// UTC day, so a day's reads can be fetched, folded or dropped on their
// own. The commit's tree is the state's tree at the tip it read (so `git
// show`, `?at=` and `git codex show` see exactly what the caller saw), its
// parent is the previous read of that chain, and its message is the call's
// audit record plus Codex-Read-At: the state commit it read. Sync never
// moves these refs unless asked; `git codex log --reads` and the page's
// reads toggle show them beside the state's history. A machine whose git
// config says codex.reads=state commits them on the state as before.
const (
	// ReadsPrefix holds the reads refs of this machine and, after a sync
	// that asked for them, of others.
	ReadsPrefix = "refs/codex/reads/"
	// TrailerReadAt is the state commit a read saw; only reads carry it.
	TrailerReadAt = "Codex-Read-At"
)

// IsRead reports whether an event is a read or refusal recorded off the
// state (on a reads ref), not a commit of the state's history.
func (ev Event) IsRead() bool { return ev.Get(TrailerReadAt) != "" }

// ReadsRefs lists the reads refs this repository holds, sorted: its own
// (refs/codex/reads/<machine>/<day>) and those SyncReads fetched
// (refs/codex/remotes/<remote>/reads/<machine>/<day>).
func (s *Store) ReadsRefs() ([]string, error) {
	own, err := gitrepo.ListRefs(s.commonDir, ReadsPrefix)
	if err != nil {
		return nil, err
	}
	fetched, err := gitrepo.ListRefs(s.commonDir, remotesPrefix)
	if err != nil {
		return nil, err
	}
	for _, r := range fetched {
		if rest := strings.TrimPrefix(r, remotesPrefix); strings.Contains(rest, "/reads/") {
			own = append(own, r)
		}
	}
	return own, nil
}

// SyncReads is what `git codex sync --reads` adds to a sync: it pushes
// this machine's reads refs to remote (a chain only grows, but a day
// folded by `git codex archive` replaces its chain, and only this machine
// writes its own: so forced) and fetches every machine's from it into
// refs/codex/remotes/<remote>/reads/, so that an audit on one machine
// sees the reads of all that published theirs. A plain sync moves none
// of them.
func (s *Store) SyncReads(ctx context.Context, remote string, progress io.Writer) error {
	if err := checkRemote(remote); err != nil {
		return err
	}
	quiet := "--quiet"
	if progress != nil {
		quiet = "--progress"
	}
	if machine, err := s.Machine(); err == nil && machine != "" {
		spec := ReadsPrefix + machine + "/*"
		if err := s.gitTo(ctx, nil, progress, "push", quiet, "--no-verify", remote, "+"+spec+":"+spec); err != nil {
			return fmt.Errorf("gitstate: push %s: %w", spec, err)
		}
	}
	spec := "+" + ReadsPrefix + "*:" + remoteDir(remote) + "reads/*"
	if err := s.gitTo(ctx, nil, progress, "fetch", quiet, "--no-write-fetch-head", remote, spec); err != nil {
		return fmt.Errorf("gitstate: fetch %s: %w", ReadsPrefix, err)
	}
	return nil
}

// recordsNothing reports whether a transaction's commit would change
// nothing in the state's history but add its audit record: its tree is
// its base's, it merges nothing and writes no side ref.
func (s *Store) recordsNothing(tx *Tx, tip, root plumbing.Hash) bool {
	return !s.config().readsOnState && !tip.IsZero() && root == tx.base.root && len(tx.merged) == 0 && len(tx.side) == 0
}

// commitRead writes a transaction that changed nothing on this machine's
// reads ref of the day. objs holds what tx.build wrote (nothing new: the
// tree is the tip's). The caller holds the writer lock.
func (s *Store) commitRead(tx *Tx, tip, root plumbing.Hash, objs *gitrepo.Batch) (Commit, error) {
	machine, err := s.MachineID()
	if err != nil {
		return Commit{}, err
	}
	ref := ReadsPrefix + machine + "/" + tx.now.UTC().Format("2006-01-02")
	prev, _, err := gitrepo.ReadRef(s.commonDir, ref)
	if err != nil {
		return Commit{}, err
	}
	meta := *tx.meta
	meta.Trailers = append(append([]Trailer(nil), meta.Trailers...), Trailer{Key: TrailerReadAt, Value: tip.String()})
	committer := gitrepo.Signature{Name: s.opts.Committer.Name, Email: s.opts.Committer.Email, When: tx.now}
	author := committer
	if a := meta.Author; a.Name != "" {
		author = gitrepo.Signature{Name: a.Name, Email: a.Email, When: tx.now}
	}
	// a read happens at the state's time: it advances no clock
	c := &gitrepo.Commit{Author: author, Committer: committer, Message: meta.message(tx.base.clock), TreeHash: root}
	if !prev.IsZero() {
		c.ParentHashes = []plumbing.Hash{prev}
	}
	h, err := objs.Encode(plumbing.CommitObject, c)
	if err != nil {
		return Commit{}, err
	}
	if err := s.writeObjects(objs); err != nil {
		return Commit{}, err
	}
	if err := s.swapRef(ref, prev, h); err != nil {
		return Commit{}, fmt.Errorf("gitstate: write %s: %w", ref, err)
	}
	out := Commit{Hash: h.String(), Tree: root.String(), Clock: tx.base.clock, Time: tx.now, Ref: ref}
	if !prev.IsZero() {
		out.Parent = prev.String()
	}
	return out, nil
}

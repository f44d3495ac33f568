package gitstate

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// Archived cycles travel with sync as refs of their own: each is written
// once, under an id no other cycle has, so a side takes those it lacks and
// keeps its own. Two different archives under one id (the same cycle
// archived on two machines before a sync) stay as they are on each side;
// the remote's is at refs/codex/remotes/<remote>/archive/<id>.

// localArchives lists the archive refs this repository has.
func (s *Store) localArchives() ([]string, error) {
	refs, err := s.refsUnder(ArchivePrefix)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(refs))
	for i, r := range refs {
		names[i] = r.name
	}
	return names, nil
}

// unpublishedArchives lists the local archives the remote lacks: those it
// did not advertise (adv), or without adv, those it had none of when last
// fetched (no remote-tracking ref).
func (s *Store) unpublishedArchives(ctx context.Context, remote string, adv advertised) ([]string, error) {
	refs, err := s.localArchives()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ref := range refs {
		if adv != nil {
			if _, ok := adv[ref]; !ok {
				out = append(out, ref)
			}
			continue
		}
		if _, ok, err := gitrepo.ReadRef(s.commonDir, trackingRef(remote, ref)); err != nil {
			return nil, err
		} else if !ok {
			out = append(out, ref)
		}
	}
	return out, nil
}

// adoptArchives creates each archive ref fetched from remote that is not
// here yet; one that is here stays as it is. A record archive that does
// not check out (archivedIndex.check: its manifest names a state commit
// this repository lacks, or it holds what that commit did not, or what
// archive never takes) is not adopted: it stays at the remote-tracking
// ref, where a merge still finds it and names it in Codex-Archive-Refused,
// and it is neither ours nor pushed on to our other remotes. Archived
// cycles have no such check and are adopted as they come. A refusal is
// remembered (archiverefused.go): the same archive commit is not walked
// again at the next sync, only when the remote's ref moves. layout says
// what a record archive may hold (DirLayout.Retention): without one, no
// record archive is adopted. checks, if not nil, is the index the round's
// merge used: an archive it checked is not walked again.
func (s *Store) adoptArchives(ctx context.Context, remote string, layout *Layout, checks *archivedIndex) error {
	prefix := remoteDir(remote) + "archive/"
	refs, err := s.refsUnder(prefix)
	if err != nil {
		return err
	}
	for _, r := range refs {
		local := ArchivePrefix + strings.TrimPrefix(r.name, prefix)
		if _, ok, err := gitrepo.ReadRef(s.commonDir, local); err != nil {
			return err
		} else if ok {
			continue
		}
		if strings.HasPrefix(local, RecordArchivePrefix) {
			if checks == nil {
				checks = s.archivedIndex(ctx, layout)
			}
			why, remember, err := checks.refusal(r.name, r.hash)
			if err != nil {
				return err
			}
			if remember {
				if err := s.rememberRefusal(ctx, r.hash, checks.print, why); err != nil {
					return err
				}
			}
			if why != "" {
				continue
			}
		}
		// create only: a ref made meanwhile is kept
		if err := s.git(ctx, nil, "update-ref", local, r.hash.String(), plumbing.ZeroHash.String()); err != nil {
			return fmt.Errorf("gitstate: adopt %s: %w", local, err)
		}
	}
	var refused map[plumbing.Hash]string
	if checks != nil {
		refused = checks.refused
	}
	if refused == nil {
		var err error
		if refused, err = s.refusedArchives(); err != nil {
			return err
		}
	}
	return s.forgetRefusals(ctx, refused)
}

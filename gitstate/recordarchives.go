package gitstate

import (
	"context"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// LastRecordArchive names the newest record archive (RecordArchivePrefix:
// this repository's and those sync copied from its remotes) and when it
// was made (its commit's time), so that a watcher can run retention once
// an interval, whoever archived last, with nothing but the refs to go by:
// the archives are the record of retention's runs. ok is false when there
// is none.
func (s *Store) LastRecordArchive(ctx context.Context) (ref string, at time.Time, ok bool, err error) {
	refs, err := gitrepo.ListRefs(s.commonDir, ArchivePrefix)
	if err != nil {
		return "", time.Time{}, false, err
	}
	for _, r := range refs {
		if ctx.Err() != nil {
			return "", time.Time{}, false, ctx.Err()
		}
		if !strings.HasPrefix(r, RecordArchivePrefix) {
			continue
		}
		h, found, err := gitrepo.ReadRef(s.commonDir, r)
		if err != nil || !found {
			continue // a ref that vanished meanwhile
		}
		c, err := s.readCommit(h)
		if err != nil {
			return "", time.Time{}, false, err
		}
		if when := c.Committer.When; !ok || when.After(at) {
			ref, at, ok = r, when, true
		}
	}
	return ref, at, ok, nil
}

package gitstate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
)

// Folding a day of reads (FoldReads) leaves that day's read commits,
// ~20,000 on a busy machine, reachable from no ref. git gc without cruft
// packs (`repack -A --unpack-unreachable=<gc.pruneExpire>`) writes every
// unreachable object younger than gc.pruneExpire (two weeks) out of its
// pack as a loose file, and every gc until then reads them again: one
// folded day took a gc of a day's state from 2.1 s to 21 s, and the gcs
// after it 13 s each, with 22,000 loose files left (docs/PERFORMANCE.md,
// "Sync on a long history"); two weeks of folds would be 300,000 files,
// and their number keeps `gc --auto` firing after every fetch until git
// gives up on it for a day ("too many unreachable loose objects"). git
// 2.37 writes them into one cruft pack instead, whose per-object times
// let gc prune them on the same schedule (gc.cruftPacks; git 2.42 does so
// by default): the same gc took 3.0 s and left no loose object.
//
// So before its first fold the store asks git to keep unreachable objects
// as its newer versions do: it sets gc.cruftPacks=true in the
// repository's own config, unless a config of the user's says anything
// about it at any level (a false there is the user's choice and stays).
// It is git's maintenance, in git's own mode; git older than 2.37 ignores
// the setting.
const cruftPacksKey = "gc.cruftPacks"

// preferCruftPacks sets gc.cruftPacks=true in the repository's config
// when no git config sets it (see above).
func (s *Store) preferCruftPacks(ctx context.Context) error {
	var out bytes.Buffer
	err := s.git(ctx, &out, "config", "--get", cruftPacksKey)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil // set, to whatever: the user's
	case !errors.As(err, &ee) || ee.ExitCode() != 1:
		return fmt.Errorf("gitstate: read %s: %w", cruftPacksKey, err)
	}
	if err := s.git(ctx, nil, "config", "--local", cruftPacksKey, "true"); err != nil {
		return fmt.Errorf("gitstate: set %s: %w", cruftPacksKey, err)
	}
	return nil
}

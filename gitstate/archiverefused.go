package gitstate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// A record archive a remote pushed that does not check out
// (archivedIndex.check) is refused at every sync that fetches it: sync
// does not adopt it and a merge does not let it delete anything. Checking
// it walks it beside the state commit its manifest names (0.05 s for a
// small one, more for a big one), and what it is checked against never
// changes: its commit, the state commit (objects, immutable) and the
// kinds archive takes (the layout). So a refusal is remembered in the
// repository's own config, which is never pushed or fetched:
//
//	[codex-archive-refused "<archive commit>"]
//		why = <layout print> <why it is refused>
//
// and an archive whose commit is remembered, under the same layout, is
// refused for the same reason without being walked again: re-checked only
// when the remote's archive ref moves to another commit, or a build whose
// kinds differ reads it. A refusal that may not last (its state commit is
// not here yet: a later fetch may bring it) is not remembered; nor is any
// check that passed. Remembered refusals of commits no remote-tracking
// archive ref names any more are forgotten at the next sync.
const refusedArchiveSection = "codex-archive-refused"

// retentionPrint names the layout's table of what archive takes
// (DirLayout.Retention), which a check's verdict depends on.
func (l *Layout) retentionPrint() string {
	if l == nil {
		return "none"
	}
	var rows []string
	for _, d := range l.Dirs {
		if d.Retention != "" {
			rows = append(rows, d.Dir+"="+d.Retention)
		}
	}
	sort.Strings(rows)
	sum := sha256.Sum256([]byte(strings.Join(rows, "\n")))
	return hex.EncodeToString(sum[:6])
}

// refusedArchives reads the remembered refusals: archive commit -> "<layout
// print> <why>".
func (s *Store) refusedArchives() (map[plumbing.Hash]string, error) {
	entries, err := s.GitConfig()
	if err != nil {
		return nil, err
	}
	out := map[plumbing.Hash]string{}
	for _, e := range entries {
		if e.Section == refusedArchiveSection && e.HasSubsection && e.Key == "why" && plumbing.IsHash(e.Subsection) {
			out[plumbing.NewHash(e.Subsection)] = e.Value // the last one wins, as in git
		}
	}
	return out, nil
}

// rememberRefusal records that the archive at commit is refused for why
// under the layout whose print is mark.
func (s *Store) rememberRefusal(ctx context.Context, commit plumbing.Hash, mark, why string) error {
	if err := s.SetGitConfig(ctx, refusedArchiveSection+"."+commit.String()+".why", mark+" "+why); err != nil {
		return fmt.Errorf("gitstate: remember the refusal of archive %s: %w", commit, err)
	}
	return nil
}

// forgetRefusals drops the remembered refusals of commits no fetched
// record archive ref names any more (the remote moved or deleted it), so
// the config does not keep what no sync will meet again.
func (s *Store) forgetRefusals(ctx context.Context, refused map[plumbing.Hash]string) error {
	if len(refused) == 0 {
		return nil
	}
	fetched, err := gitrepo.ListRefs(s.commonDir, remotesPrefix)
	if err != nil {
		return err
	}
	named := map[plumbing.Hash]bool{}
	for _, r := range fetched {
		if !strings.Contains(strings.TrimPrefix(r, remotesPrefix), "/archive/records-") {
			continue
		}
		if h, ok, err := gitrepo.ReadRef(s.commonDir, r); err == nil && ok {
			named[h] = true
		}
	}
	for c := range refused {
		if named[c] {
			continue
		}
		if err := s.UnsetGitConfig(ctx, refusedArchiveSection+"."+c.String()+".why"); err != nil {
			return fmt.Errorf("gitstate: forget the refusal of archive %s: %w", c, err)
		}
	}
	return nil
}

// remembered is the refusal of the archive at commit remembered under this
// index's layout, if any.
func (a *archivedIndex) remembered(commit plumbing.Hash) (string, bool, error) {
	if a.refused == nil {
		r, err := a.s.refusedArchives()
		if err != nil {
			return "", false, err
		}
		a.refused, a.print = r, a.layout.retentionPrint()
	}
	v, ok := a.refused[commit]
	if !ok {
		return "", false, nil
	}
	mark, why, ok := strings.Cut(v, " ")
	if !ok || mark != a.print || why == "" {
		return "", false, nil // another build's kinds: check it again
	}
	return why, true, nil
}

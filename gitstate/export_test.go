package gitstate

import (
	"context"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// Exports of unexported functions for the tests in package gitstate_test.

// SplitPath is splitPath.
func SplitPath(path string) ([]string, error) { return splitPath(path) }

// FormatMessage renders m as the commit message of a commit at clock c.
func FormatMessage(m Meta, c Clock) string { return m.message(c) }

// ParseMessage is parseMessage.
func ParseMessage(msg string) Meta { return parseMessage(msg) }

// ClockOf is clockOf.
func ClockOf(msg string) Clock { return clockOf(msg) }

// SetSwapHook installs fn to be called at named stages of a ref swap
// ("wait": "<ref>.lock" is held by someone else; "locked": this writer holds
// it and is about to move the ref).
func (s *Store) SetSwapHook(fn func(stage string)) { s.swapHook = fn }

// SetArchiveCheckHook installs fn to be called each time a record archive
// is walked to be checked.
func (s *Store) SetArchiveCheckHook(fn func(ref string)) { s.archiveCheckHook = fn }

// SetLinkFunc replaces the hard link used to place "<ref>.lock" (nil
// restores os.Link), so tests can run the O_EXCL fallback for filesystems
// without hard links.
func (s *Store) SetLinkFunc(fn func(oldname, newname string) error) { s.writer.link = fn }

// WriteTree writes a state tree holding files (path -> content) and returns
// its hash; no files make the empty tree.
func (s *Store) WriteTree(files map[string]string) (string, error) {
	changes := make(map[string][]byte, len(files))
	for p, c := range files {
		changes[p] = []byte(c)
	}
	sn := &Snapshot{s: s, trees: map[plumbing.Hash]*gitrepo.Tree{}}
	var out gitrepo.Batch
	h, _, err := buildTree(sn, &out, "", plumbing.ZeroHash, changes)
	if err == nil && h.IsZero() {
		h, err = out.Encode(plumbing.TreeObject, &gitrepo.Tree{})
	}
	if err == nil {
		err = s.writeObjects(&out)
	}
	return h.String(), err
}

// TreeFiles reads a state tree back as path -> content.
func (s *Store) TreeFiles(tree string) (map[string]string, error) {
	sn := &Snapshot{s: s, root: plumbing.NewHash(tree), trees: map[plumbing.Hash]*gitrepo.Tree{}}
	out := map[string]string{}
	err := sn.Walk("", func(p string, b []byte) error {
		out[p] = string(b)
		return nil
	})
	return out, err
}

// MergeTrees is mergeTrees on hex tree hashes; "" is the zero hash (no
// tree: histories without a common base).
func (s *Store) MergeTrees(base, ours, theirs string, resolve Resolver) (string, MergeReport, error) {
	hash := func(h string) plumbing.Hash {
		if h == "" {
			return plumbing.ZeroHash
		}
		return plumbing.NewHash(h)
	}
	h, r, err := s.mergeTrees(context.Background(), hash(base), hash(ours), hash(theirs), [2]plumbing.Hash{}, resolve, nil, nil)
	return h.String(), r, err
}

// MergeBase is mergeBase on hex commit hashes.
func (s *Store) MergeBase(ctx context.Context, a, b string) (string, error) {
	h, err := s.mergeBase(ctx, plumbing.NewHash(a), plumbing.NewHash(b))
	return h.String(), err
}

// WriteRawObject stores data as an object of type typ ("blob", "tree",
// "commit") exactly as given, unchecked, and returns its hash.
func (s *Store) WriteRawObject(typ string, data []byte) (string, error) {
	t, err := plumbing.ParseObjectType(typ)
	if err != nil {
		return "", err
	}
	b := &gitrepo.Batch{}
	h := b.Add(t, data)
	return h.String(), s.writeObjects(b)
}

// CheckShape is checkShape of the tree with nothing to compare it with
// (as a fresh clone adopts a state), against layout.
func (s *Store) CheckShape(tree string, layout *Layout) error {
	return s.checkShape(plumbing.ZeroHash, plumbing.NewHash(tree), layout.slotAt)
}

// CanonicalTree reports whether the tree decodes and encodes back to the
// same object, as a tree git itself wrote does.
func (s *Store) CanonicalTree(tree string) (bool, error) {
	t, err := s.readTree(plumbing.NewHash(tree))
	if err != nil {
		return false, err
	}
	b := &gitrepo.Batch{}
	h, err := b.Encode(plumbing.TreeObject, &gitrepo.Tree{Entries: t.Entries})
	return h == plumbing.NewHash(tree), err
}

// RepackAt is repackAt.
const RepackAt = repackAt

// SetPhaseHook installs fn to be called as a write passes the stages of
// its critical section (benchmarks measure where the time goes).
func (s *Store) SetPhaseHook(fn func(phase string)) { s.phaseHook = fn }

// MaintenanceEnv is maintenanceEnv.
func MaintenanceEnv(env []string) []string { return maintenanceEnv(env) }

// BackgroundScript is backgroundScript: the shell that runs the store's
// background repack under git gc's and git maintenance's locks.
const BackgroundScript = backgroundScript

// MidxPackNames is midxPackNames.
func MidxPackNames(b []byte) ([]string, error) { return midxPackNames(b) }

// RefsUnder is refsUnder, as "<name> <object>" lines.
func (s *Store) RefsUnder(prefix string) ([]string, error) {
	refs, err := s.refsUnder(prefix)
	var out []string
	for _, r := range refs {
		out = append(out, r.name+" "+r.hash.String())
	}
	return out, err
}

// LocalNotes is localNotes.
func (s *Store) LocalNotes() ([]string, error) { return s.localNotes() }

// HistoryBatch is historyBatch.
const HistoryBatch = historyBatch

// HistoryPacksFile and ReadPacksFile are historyPacksFile and
// readPacksFile.
const (
	HistoryPacksFile = historyPacksFile
	ReadPacksFile    = readPacksFile
)

package gitstate

import (
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// objReader reads the objects a merge's checks of incoming trees need
// (checkShape, validateChange): the store's own reader, shared under
// objMu, or an asideReader that one goroutine of the merge owns, so that
// two checks read side by side on the machine's two CPUs instead of
// taking turns at objMu (gitrepo.Repo is not safe for concurrent use).
type objReader interface {
	readRaw(t plumbing.ObjectType, h plumbing.Hash) ([]byte, error)
	readTree(h plumbing.Hash) (*gitrepo.Tree, error)
	readBlob(h plumbing.Hash) ([]byte, error)
	statObject(h plumbing.Hash) (plumbing.ObjectType, int64, error)
}

var _ objReader = (*Store)(nil)

// statObject is the type and size of h, from one lookup (gitrepo.Objects.Stat).
func (s *Store) statObject(h plumbing.Hash) (plumbing.ObjectType, int64, error) {
	s.objMu.Lock()
	defer s.objMu.Unlock()
	return s.objects.Stat(h)
}

// asideReader is a reader of the repository's objects of its own, for one
// goroutine, with no lock: opened for a batch of checks and closed after
// them. Its index cache is widened as the store's is during a sync
// (syncIndexBlocks): its lookups are as scattered, and the memory goes
// with the reader.
type asideReader struct{ r *gitrepo.Repo }

var _ objReader = asideReader{}

// openAside opens an asideReader; the caller closes it when done.
func (s *Store) openAside() asideReader {
	r := gitrepo.Open(s.commonDir, filepath.Join(s.commonDir, "codex", "tmp"))
	r.WidenIndexCache(syncIndexBlocks) // no restore: the reader is dropped whole
	return asideReader{r: r}
}

func (a asideReader) close() { a.r.Close() }

func (a asideReader) readRaw(t plumbing.ObjectType, h plumbing.Hash) ([]byte, error) {
	return a.r.Read(t, h)
}

func (a asideReader) readTree(h plumbing.Hash) (*gitrepo.Tree, error) { return a.r.Tree(h) }

func (a asideReader) readBlob(h plumbing.Hash) ([]byte, error) { return a.r.Blob(h) }

func (a asideReader) statObject(h plumbing.Hash) (plumbing.ObjectType, int64, error) {
	return a.r.Stat(h)
}

// readCommit reads a commit as it is, without the shallow file's view of
// its parents (the checks read no parents).
func (a asideReader) readCommit(h plumbing.Hash) (*gitrepo.Commit, error) {
	return a.r.Objects.Commit(h)
}

package gitstate

import (
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// sideRef is a commit a transaction writes at a ref other than RefState
// (an archived cycle at refs/codex/archive/<id>): its whole tree is files.
type sideRef struct {
	ref   string
	files map[string][]byte
	meta  Meta
}

// CommitAt stages a commit at ref whose tree holds exactly files (path ->
// content), with meta's summary, trailers and author; it has no parent, so
// it carries nothing but what it holds. It is written when the transaction
// commits, under the writer lock and with git's ref lock protocol, just
// before RefState moves; a ref that exists is replaced. A transaction that
// is discarded or fails writes nothing. If RefState then cannot move (a
// crash, a full disk), the ref stays written: callers make its content
// valid on its own. ref must be under refs/codex/ and not RefState.
func (tx *Tx) CommitAt(ref string, files map[string][]byte, meta Meta) error {
	if err := checkSideRef(ref); err != nil {
		return err
	}
	for p := range files {
		if _, err := splitPath(p); err != nil {
			return err
		}
	}
	tx.side = append(tx.side, sideRef{ref: ref, files: files, meta: meta})
	return nil
}

// checkSideRef accepts a ref name git accepts, under refs/codex/, that is
// not one of the refs the store or sync own.
func checkSideRef(ref string) error {
	rest, ok := strings.CutPrefix(ref, "refs/codex/")
	bad := !ok || ref == RefState || strings.HasPrefix(ref, remotesPrefix) || rest == "" ||
		strings.Contains(ref, "..") || strings.Contains(ref, "//") || strings.HasSuffix(ref, "/") ||
		strings.HasSuffix(ref, ".lock") || strings.ContainsAny(ref, " ~^:?*[\\\x7f") || strings.Contains(ref, "@{")
	for _, r := range ref {
		bad = bad || r < 0x20
	}
	for _, part := range strings.Split(rest, "/") {
		bad = bad || strings.HasPrefix(part, ".")
	}
	if bad {
		return fmt.Errorf("gitstate: %q cannot be written by a transaction: %w", ref, ErrInvalidPath)
	}
	return nil
}

// writeSideRefs writes the staged commits and moves their refs. The caller
// holds the writer lock.
func (s *Store) writeSideRefs(tx *Tx) error {
	for _, sr := range tx.side {
		empty, err := s.snapshotAt(plumbing.ZeroHash)
		if err != nil {
			return err
		}
		var objs gitrepo.Batch
		root, _, err := buildTree(empty, &objs, "", plumbing.ZeroHash, sr.files)
		if err != nil {
			return err
		}
		committer := gitrepo.Signature{Name: s.opts.Committer.Name, Email: s.opts.Committer.Email, When: tx.now}
		author := committer
		if a := sr.meta.Author; a.Name != "" {
			author = gitrepo.Signature{Name: a.Name, Email: a.Email, When: tx.now}
		}
		h, err := objs.Encode(plumbing.CommitObject, &gitrepo.Commit{Author: author, Committer: committer, Message: sr.meta.message(tx.clock), TreeHash: root})
		if err != nil {
			return err
		}
		if err := s.writeObjects(&objs); err != nil {
			return err
		}
		cur, _, err := gitrepo.ReadRef(s.commonDir, sr.ref)
		if err != nil {
			return err
		}
		if err := s.swapRef(sr.ref, cur, h); err != nil {
			return fmt.Errorf("gitstate: write %s: %w", sr.ref, err)
		}
	}
	return nil
}

package gitstate

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// Repairing the reads refs after objects were lost (`git codex init
// --restore`). A read commit's tree is the state's tree it read, so the
// objects a `git gc --prune=now` took from the state's tip are gone from
// the reads of that tip too: Restore leaves the unreadable state commits
// behind, but the reads refs still name them, and `git fsck` reports the
// broken links. RepairReads rewrites each such chain so that it names only
// objects the repository has, and keeps every audit record it can read.
const (
	// TrailerRepairedFrom is on every commit RepairReads rewrote: the
	// commit it replaces, so a Codex-Follows or a note that names the old
	// one can still be followed.
	TrailerRepairedFrom = "Codex-Repaired-From"
	// TrailerTreeLost is on a rewritten read whose state tree lost
	// objects: the tree it named and what of it is gone. Its tree is now
	// what is left (the empty tree when the root itself is gone).
	TrailerTreeLost = "Codex-Tree-Lost"
	// TrailerReadsLost is on the oldest read of a chain cut by a missing
	// commit: that commit, with every read before it (how many is not
	// known).
	TrailerReadsLost = "Codex-Reads-Lost"
)

// ReadsRepair is what RepairReads did to one reads ref.
type ReadsRepair struct {
	Ref string
	Old string // the ref's commit before
	New string // its commit now; "" when the ref was dropped
	// Reads is how many reads' audit records the ref still holds (a
	// folded day's Codex-Folded count); NoState how many of those lost
	// the state they read (their tree objects are gone).
	Reads, NoState int
	// Lost is how many reads' audit records are gone, as far as is known:
	// a folded day whose reads.jsonl is missing counts its Codex-Folded.
	Lost int
	// CutAt is a missing commit the chain went through: the reads before
	// it are gone too, and how many is not known. Set when dropped.
	CutAt string
}

// Dropped says the ref was deleted: its tip commit is gone, so nothing of
// it could be read.
func (r ReadsRepair) Dropped() bool { return r.New == "" }

// maxLostPaths is how many missing paths a Codex-Tree-Lost trailer names.
const maxLostPaths = 5

// RepairReads checks every reads ref the repository holds (this machine's
// and those fetched from others: ReadsRefs) and repairs those that name
// objects that are gone, returning one entry per ref it changed:
//
//   - a read whose state tree lost objects keeps its commit's author,
//     committer, times and message, gains Codex-Tree-Lost, and names what
//     is left of its tree (the missing subtrees and records left out);
//   - a chain cut by a missing commit keeps the reads after the cut, the
//     oldest of them parentless with Codex-Reads-Lost;
//   - every commit after the first one changed is written again on its new
//     parent, with Codex-Repaired-From naming the commit it replaces;
//   - a ref whose tip commit is gone holds nothing readable: it is
//     deleted.
//
// Nothing readable is lost: the replaced commits' messages and signatures
// are copied whole, and the trees they name are kept (only what was gone
// is left out). A ref that reads whole is not touched. Reading the chains
// takes no lock; each ref moves under the writer lock from the tip it was
// read at, and is read again, under the lock, if a call extended it
// meanwhile.
func (s *Store) RepairReads(ctx context.Context) ([]ReadsRepair, error) {
	refs, err := s.ReadsRefs()
	if err != nil || len(refs) == 0 || s.readsWhole(ctx, refs) {
		return nil, err
	}
	r := &readsRepairer{s: s, trees: map[plumbing.Hash]prunedTree{}, objs: &gitrepo.Batch{}}
	var out []ReadsRepair
	var errs []error
	for _, ref := range refs {
		rep, changed, err := r.repairRef(ctx, ref)
		if err != nil {
			if ctx.Err() != nil {
				return out, err
			}
			errs = append(errs, fmt.Errorf("gitstate: repair %s: %w", ref, err))
			continue
		}
		if changed {
			out = append(out, rep)
		}
	}
	return out, errors.Join(errs...)
}

// readsWhole asks git whether every object the refs reach is there: its
// walk of a few thousand reads over a state of 20,000 records takes
// ~0.2 s where the store's takes ~1.6 s, and the reads are whole on
// almost every restore. Anything but a clean answer (a missing object, a
// missing commit that stops git's walk) is left to the store's walk.
func (s *Store) readsWhole(ctx context.Context, refs []string) bool {
	var w missingWriter
	args := append([]string{"rev-list", "--objects", "--missing=print", "--no-object-names"}, refs...)
	return s.git(ctx, &w, args...) == nil && !w.missing
}

// missingWriter watches `git rev-list --missing=print` for a line that
// names a missing object ("?<id>").
type missingWriter struct{ missing, mid bool }

func (w *missingWriter) Write(p []byte) (int, error) {
	for _, b := range p {
		if !w.mid && b == '?' {
			w.missing = true
		}
		w.mid = b != '\n'
	}
	return len(p), nil
}

// readsRepairer holds what is known of the trees already checked, shared
// by every ref: the reads of a day name a few state trees many times, and
// state trees share most of their subtrees. objs is what the plans made
// since the last write: the pruned trees (which a later ref's plan may
// name too) and the rewritten commits.
type readsRepairer struct {
	s     *Store
	trees map[plumbing.Hash]prunedTree
	objs  *gitrepo.Batch
}

// prunedTree is a tree with what is missing below it left out.
type prunedTree struct {
	hash    plumbing.Hash // the tree itself when whole; zero when nothing is left
	missing int           // objects missing below it
	paths   []string      // up to maxLostPaths of them, relative to it ("" itself)
}

// repairRef repairs one ref; changed is false when it read whole. The
// chain is read without the writer lock, and the ref moves under it from
// the tip that was read; if a call extended the chain meanwhile, it is
// read again under the lock (what was learnt of its trees is kept, so the
// second reading costs little), where no call can extend it.
func (r *readsRepairer) repairRef(ctx context.Context, ref string) (ReadsRepair, bool, error) {
	for locked := false; ; locked = true {
		if locked {
			if err := r.s.lockWriter(); err != nil {
				return ReadsRepair{}, false, err
			}
		}
		rep, changed, err := r.repairFrom(ctx, ref, locked)
		if locked {
			r.s.unlockWriter()
		}
		if !errors.Is(err, ErrRefMoved) || locked {
			return rep, changed, err
		}
	}
}

// repairFrom reads the ref's chain and repairs it; locked says the caller
// holds the writer lock.
func (r *readsRepairer) repairFrom(ctx context.Context, ref string, locked bool) (ReadsRepair, bool, error) {
	tip, ok, err := gitrepo.ReadRef(r.s.commonDir, ref)
	if err != nil || !ok {
		return ReadsRepair{}, false, err
	}
	rep, err := r.plan(ctx, ref, tip)
	if err != nil {
		return ReadsRepair{}, false, err
	}
	if rep.New == tip.String() {
		return rep, false, nil
	}
	r.s.phase("reads-planned") // (a test extends the chain here)
	if !locked {
		if err := r.s.lockWriter(); err != nil {
			return ReadsRepair{}, false, err
		}
		defer r.s.unlockWriter()
	}
	if err := r.apply(ctx, ref, tip, rep); err != nil {
		return ReadsRepair{}, false, err
	}
	return rep, true, nil
}

// plan reads the chain from tip and builds its repaired form, whose
// objects it adds to r.objs; the repair's New is tip when it reads whole.
func (r *readsRepairer) plan(ctx context.Context, ref string, tip plumbing.Hash) (ReadsRepair, error) {
	rep := ReadsRepair{Ref: ref, Old: tip.String()}
	// the chain, newest first, as far as its commits are there
	var chain []*gitrepo.Commit
	var cut plumbing.Hash
	shallow, err := r.s.shallowSet()
	if err != nil {
		return ReadsRepair{}, err
	}
	for h := tip; !h.IsZero(); {
		if err := ctx.Err(); err != nil {
			return ReadsRepair{}, err
		}
		c, err := r.s.readCommit(h)
		if errors.Is(err, ErrObjectMissing) {
			if r.s.hasObject(h) == nil {
				// there, but not a commit: not ours to drop
				return ReadsRepair{}, fmt.Errorf("gitstate: %s is not a commit: %w", h, err)
			}
			cut = h
			break
		}
		if err != nil {
			return ReadsRepair{}, err
		}
		chain = append(chain, c)
		h = plumbing.ZeroHash
		if len(c.ParentHashes) > 0 && !shallow[c.Hash] {
			// (a shallow fetch's boundary lacks its parents by design)
			h = c.ParentHashes[0]
		}
	}
	if !cut.IsZero() {
		rep.CutAt = cut.String()
	}
	if len(chain) == 0 {
		return rep, nil // the tip itself is gone: drop the ref
	}
	// oldest first: a commit is kept as it is while it and every one
	// before it are whole
	var parent plumbing.Hash
	changed := false
	for i := len(chain) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return ReadsRepair{}, err
		}
		c := chain[i]
		folded := 0
		if n, err := strconv.Atoi(trailerIn(c.Message, TrailerFolded)); err == nil && n > 0 {
			folded = n
		}
		pt, err := r.prune(c.TreeHash)
		if err != nil {
			return ReadsRepair{}, err
		}
		var extra []Trailer
		if pt.missing > 0 {
			extra = append(extra, Trailer{Key: TrailerTreeLost, Value: treeLost(c.TreeHash, pt)})
		}
		switch {
		case folded > 0 && pt.missing > 0:
			rep.Lost += folded // reads.jsonl was the day's audit
		case folded > 0:
			rep.Reads += folded
		default:
			rep.Reads++
			if pt.missing > 0 {
				rep.NoState++
			}
		}
		if i == len(chain)-1 && !cut.IsZero() {
			extra = append(extra, Trailer{Key: TrailerReadsLost, Value: cut.String() + " (this chain's reads before it are gone with it)"})
		}
		if !changed && len(extra) == 0 {
			parent = c.Hash
			continue
		}
		changed = true
		tree := pt.hash
		if tree.IsZero() {
			if tree, err = r.objs.Encode(plumbing.TreeObject, &gitrepo.Tree{}); err != nil {
				return ReadsRepair{}, err
			}
		}
		extra = append(extra, Trailer{Key: TrailerRepairedFrom, Value: c.Hash.String()})
		nc := &gitrepo.Commit{Author: c.Author, Committer: c.Committer, Message: withTrailers(c.Message, extra), TreeHash: tree}
		if !parent.IsZero() {
			nc.ParentHashes = []plumbing.Hash{parent}
		}
		if parent, err = r.objs.Encode(plumbing.CommitObject, nc); err != nil {
			return ReadsRepair{}, err
		}
	}
	rep.New = parent.String()
	return rep, nil
}

// prune returns tree h with what is missing below it left out; the trees
// it had to write again go into r.objs.
func (r *readsRepairer) prune(h plumbing.Hash) (prunedTree, error) {
	if pt, ok := r.trees[h]; ok {
		return pt, nil
	}
	t, err := r.s.readTree(h)
	if errors.Is(err, ErrObjectMissing) {
		pt := prunedTree{missing: 1, paths: []string{""}}
		r.trees[h] = pt
		return pt, nil
	}
	if err != nil {
		return prunedTree{}, err
	}
	out := prunedTree{hash: h}
	var kept []gitrepo.TreeEntry
	lost := func(name string, sub prunedTree) {
		out.missing += sub.missing
		for _, p := range sub.paths {
			if len(out.paths) < maxLostPaths {
				out.paths = append(out.paths, path.Join(name, p))
			}
		}
	}
	for _, e := range t.Entries {
		switch {
		case e.Mode == filemode.Dir:
			sub, err := r.prune(e.Hash)
			if err != nil {
				return prunedTree{}, err
			}
			lost(e.Name, sub)
			if !sub.hash.IsZero() {
				kept = append(kept, gitrepo.TreeEntry{Name: e.Name, Mode: e.Mode, Hash: sub.hash})
			}
		case e.Mode == filemode.Submodule:
			kept = append(kept, e) // another repository's commit
		default:
			err := r.s.hasObject(e.Hash)
			if errors.Is(err, ErrObjectMissing) {
				lost(e.Name, prunedTree{missing: 1, paths: []string{""}})
				continue
			}
			if err != nil {
				return prunedTree{}, err
			}
			kept = append(kept, e)
		}
	}
	switch {
	case out.missing == 0:
	case len(kept) == 0:
		out.hash = plumbing.ZeroHash
	default:
		nh, err := r.objs.Encode(plumbing.TreeObject, &gitrepo.Tree{Entries: kept})
		if err != nil {
			return prunedTree{}, err
		}
		out.hash = nh
	}
	r.trees[h] = out
	return out, nil
}

// treeLost is a Codex-Tree-Lost value: the tree a read named, how many of
// its objects are gone and which.
func treeLost(tree plumbing.Hash, pt prunedTree) string {
	if len(pt.paths) == 1 && pt.paths[0] == "" {
		return tree.String() + " (the whole tree is gone)"
	}
	paths := strings.Join(pt.paths, ", ")
	if more := pt.missing - len(pt.paths); more > 0 {
		paths += fmt.Sprintf(" and %d more", more)
	}
	return fmt.Sprintf("%s (%d object(s) gone: %s)", tree, pt.missing, paths)
}

// withTrailers adds trailers to a commit message's trailer block, before
// its Codex-Clock (which stays last, as Meta.message writes it).
func withTrailers(msg string, extra []Trailer) string {
	var b strings.Builder
	for _, t := range extra {
		b.WriteString(oneLine(t.Key) + ": " + oneLine(t.Value) + "\n")
	}
	if i := strings.LastIndex(msg, "\n"+TrailerClock+": "); i >= 0 {
		return msg[:i+1] + b.String() + msg[i+1:]
	}
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	return msg + b.String()
}

// apply writes the plans' objects and moves (or deletes) the ref from tip,
// as a read's commit moves it. The caller holds the writer lock.
func (r *readsRepairer) apply(ctx context.Context, ref string, tip plumbing.Hash, rep ReadsRepair) error {
	s := r.s
	if rep.Dropped() {
		cur, ok, err := gitrepo.ReadRef(s.commonDir, ref)
		if err != nil {
			return err
		}
		if !ok || cur != tip {
			return fmt.Errorf("gitstate: update %s: expected %s, found %s: %w", ref, tip, cur, ErrRefMoved)
		}
		// (git deletes a packed ref too)
		return s.git(ctx, nil, "update-ref", "-m", "git codex init --restore: drop unreadable reads", "-d", ref, tip.String())
	}
	if err := s.writeObjects(r.objs); err != nil {
		return err
	}
	r.objs = &gitrepo.Batch{} // in the object store now: later plans may name them
	return s.swapRef(ref, tip, plumbing.NewHash(rep.New))
}

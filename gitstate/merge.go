package gitstate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// Resolver decides a record that both sides of a merge changed, each in its
// own way. base, ours and theirs are the record's contents at the merge base
// and on each side; nil means absent. It returns the merged content (nil to
// leave the record absent).
//
// A Resolver must be symmetric, resolve(p, b, o, t) == resolve(p, b, t, o),
// and depend on nothing but its arguments: that is what makes merging A into
// B give the same tree as merging B into A, on any machine.
type Resolver func(path string, base, ours, theirs []byte) []byte

// MergeReport says what a three-way merge of state trees did.
type MergeReport struct {
	// Resolved lists the paths that both sides changed, which the
	// resolver decided, in path order.
	Resolved []string
	// Dropped lists records one side had where the other has a
	// directory: the directory wins, the record is not in the result.
	Dropped []string
	// Kept lists records one side deleted that the other still had, in
	// directories whose records no tool deletes (Layout's Keep): they stay.
	Kept []string
	// ArchiveRefused lists records one side deleted that record archives
	// hold, where no archive let the deletion stand (a hostile or broken
	// archive, or a record that had not ended), with each archive and why:
	// they stay, and are in Kept too. In path order.
	ArchiveRefused []ArchiveRefusal
	// Sides holds the three versions of each resolved record (nil where
	// a side has none), for a MergeFunc that restores invariants: it needs
	// to know what each side claimed, not only what the resolver chose.
	Sides map[string]Sides
}

// Sides are the three versions of a record in a three-way merge.
type Sides struct {
	Base, Ours, Theirs []byte
}

// mergeTrees merges three state trees (zero hashes are empty trees) and
// writes the result. Whole subtrees that only one side changed are taken by
// hash without being read, so the cost follows the size of the two sides'
// changes, not the size of the state.
//
// Under directories whose records a layout keeps, a record one side deleted
// and the other still has stays (mergeKept): those subtrees are merged name
// by name even when only one side changed them.
//
// tips are the commits of ours and theirs (zero where there is none): a
// record one side deleted leaves a kept directory only if an archive whose
// state commit is in that side's history holds it (archivedAway).
//
// archived answers for the archives (nil: an index of its own).
func (s *Store) mergeTrees(ctx context.Context, base, ours, theirs plumbing.Hash, tips [2]plumbing.Hash, resolve Resolver, layout *Layout, archived *archivedIndex) (plumbing.Hash, MergeReport, error) {
	if archived == nil {
		archived = s.archivedIndex(ctx, layout)
	}
	m := &merger{s: s, resolve: resolve, layout: layout, out: &gitrepo.Batch{}, tips: tips, archived: archived}
	root, err := m.merge("", dirNode(base), dirNode(ours), dirNode(theirs))
	if err != nil {
		return plumbing.ZeroHash, MergeReport{}, err
	}
	if root.absent() {
		h, err := m.write(&gitrepo.Tree{})
		if err != nil {
			return plumbing.ZeroHash, MergeReport{}, err
		}
		root = dirNode(h)
	}
	if err := s.writeObjects(m.out); err != nil {
		return plumbing.ZeroHash, MergeReport{}, err
	}
	sort.Strings(m.report.Resolved)
	sort.Strings(m.report.Dropped)
	sort.Strings(m.report.Kept)
	sort.SliceStable(m.report.ArchiveRefused, func(i, j int) bool { return m.report.ArchiveRefused[i].Path < m.report.ArchiveRefused[j].Path })
	return root.hash, m.report, nil
}

// node is one name in one of the three trees.
type node struct {
	hash plumbing.Hash // zero: absent
	dir  bool
}

func dirNode(h plumbing.Hash) node { return node{hash: h, dir: true} }

func (n node) absent() bool { return n.hash.IsZero() }

type merger struct {
	s       *Store
	resolve Resolver
	layout  *Layout // nil: no directory is kept
	report  MergeReport
	out     *gitrepo.Batch // the objects the merge writes, stored as one pack at the end
	// archived tells records a side archived (retention) from records it
	// lost: only the first may leave a kept directory.
	archived *archivedIndex
	// tips are the commits of ours and theirs: an archive's state commit
	// must be in the deleting side's history (and not in the keeping
	// side's, if it holds another version than the keeping side's)
	tips [2]plumbing.Hash
}

// write encodes a new object into the merge's output.
func (m *merger) write(t *gitrepo.Tree) (plumbing.Hash, error) {
	return m.out.Encode(plumbing.TreeObject, t)
}

// writeBlob adds a record's content to the merge's output.
func (m *merger) writeBlob(data []byte) (plumbing.Hash, error) {
	return m.out.Add(plumbing.BlobObject, data), nil
}

// merge returns the merged node for path.
func (m *merger) merge(path string, b, o, t node) (node, error) {
	if o == t {
		return o, nil
	}
	kept := m.layout.keeps(splitNames(path))
	if !kept {
		switch {
		case o == b:
			return t, nil
		case t == b:
			return o, nil
		}
	}
	// Both sides changed path, or it is kept and one side changed it (it
	// may have dropped records). Directories (or a directory and nothing)
	// merge name by name; records go to the resolver.
	if (o.dir || o.absent()) && (t.dir || t.absent()) {
		return m.mergeDirs(path, b, o, t)
	}
	if o.dir || t.dir {
		// A record on one side where the other has a directory: keep the
		// directory (it holds records; the lone record's path is invalid in
		// a state that has the directory). It is reported, not lost
		// silently; both versions stay in the merged histories.
		m.report.Dropped = append(m.report.Dropped, path)
		if o.dir {
			return o, nil
		}
		return t, nil
	}
	if kept {
		switch {
		case o.absent() || t.absent():
			// deleted on one side: a record no tool deletes stays,
			// unless that side archived it unchanged (retention)
			if gone, err := m.archivedAway(path, b, o, t); err != nil || gone {
				return node{}, err
			}
			if !b.absent() {
				m.report.Kept = append(m.report.Kept, path)
			}
			if o.absent() {
				return t, nil
			}
			return o, nil
		case o == b:
			return t, nil
		case t == b:
			return o, nil
		}
	}
	return m.mergeRecord(path, b, o, t)
}

func splitNames(path string) []string {
	if path == "" {
		return nil
	}
	return strings.Split(path, "/")
}

func (m *merger) mergeDirs(path string, b, o, t node) (node, error) {
	be, err := m.entries(b)
	if err != nil {
		return node{}, err
	}
	oe, err := m.entries(o)
	if err != nil {
		return node{}, err
	}
	te, err := m.entries(t)
	if err != nil {
		return node{}, err
	}
	names := map[string]bool{}
	for _, es := range []map[string]node{be, oe, te} {
		for n := range es {
			names[n] = true
		}
	}
	tree := &gitrepo.Tree{}
	for name := range names {
		child := name
		if path != "" {
			child = path + "/" + name
		}
		r, err := m.merge(child, be[name], oe[name], te[name])
		if err != nil {
			return node{}, err
		}
		if r.absent() {
			continue
		}
		mode := filemode.Regular
		if r.dir {
			mode = filemode.Dir
		}
		tree.Entries = append(tree.Entries, gitrepo.TreeEntry{Name: name, Mode: mode, Hash: r.hash})
	}
	if len(tree.Entries) == 0 {
		return node{}, nil
	}
	// a merge that ends where one side is (as kept directories often do)
	// reuses that side's tree instead of writing it again
	for _, side := range []struct {
		n  node
		es map[string]node
	}{{o, oe}, {t, te}} {
		if side.n.dir && sameEntries(tree.Entries, side.es) {
			return side.n, nil
		}
	}
	gitrepo.SortTreeEntries(tree.Entries)
	h, err := m.write(tree)
	return node{hash: h, dir: true}, err
}

// sameEntries reports whether a merged tree's entries are exactly es.
func sameEntries(entries []gitrepo.TreeEntry, es map[string]node) bool {
	if len(entries) != len(es) {
		return false
	}
	for _, e := range entries {
		n, ok := es[e.Name]
		if !ok || n.hash != e.Hash || n.dir != (e.Mode == filemode.Dir) {
			return false
		}
	}
	return true
}

// entries lists a directory node's children; records and absent nodes have
// none.
func (m *merger) entries(n node) (map[string]node, error) {
	out := map[string]node{}
	if n.absent() || !n.dir {
		return out, nil
	}
	t, err := m.s.readTree(n.hash)
	if err != nil {
		return nil, err
	}
	for _, e := range t.Entries {
		out[e.Name] = node{hash: e.Hash, dir: e.Mode == filemode.Dir}
	}
	return out, nil
}

func (m *merger) mergeRecord(path string, b, o, t node) (node, error) {
	var contents [3][]byte
	for i, n := range []node{b, o, t} {
		if n.absent() || n.dir {
			continue
		}
		data, err := m.s.readBlob(n.hash)
		if err != nil {
			return node{}, err
		}
		contents[i] = data
	}
	merged := m.resolve(path, contents[0], contents[1], contents[2])
	m.report.Resolved = append(m.report.Resolved, path)
	if m.report.Sides == nil {
		m.report.Sides = map[string]Sides{}
	}
	m.report.Sides[path] = Sides{Base: contents[0], Ours: contents[1], Theirs: contents[2]}
	switch {
	case merged == nil:
		return node{}, nil
	case contents[1] != nil && bytes.Equal(merged, contents[1]):
		return o, nil
	case contents[2] != nil && bytes.Equal(merged, contents[2]):
		return t, nil
	}
	h, err := m.writeBlob(merged)
	return node{hash: h}, err
}

// MergeStatus says what Merge did.
type MergeStatus string

// Merge outcomes.
const (
	MergeUpToDate    MergeStatus = "up-to-date"   // theirs was already in our history
	MergeFastForward MergeStatus = "fast-forward" // ours was in theirs: the ref moved to theirs
	MergeMerged      MergeStatus = "merged"       // a merge commit with both parents
)

// MergeResult is what Merge did.
type MergeResult struct {
	Status MergeStatus
	Commit string // the tip afterwards
	Report MergeReport
}

// MergeFunc finishes a merge commit: it may restore invariants the merge
// broke (through tx, which shows the merged tree) and must set the commit's
// metadata. Like the Resolver it must be deterministic, so both sides of a
// sync write the same tree: the records it writes take their ids from
// DeriveID, not NewID, and their times from the merged records, not from
// tx.Now() (the wall clock, which dates the merge commit only).
type MergeFunc func(tx *Tx, report MergeReport) error

// Merge brings the state history at rev (typically a remote-tracking ref
// such as refs/codex/remotes/origin/state) into the local state, under the
// writer lock, so local transactions queue behind it and lose nothing.
//
//  1. rev already in our history: nothing to do.
//  2. our tip in rev's history, or no local state yet: the ref moves to rev.
//  3. both moved on: a three-way merge of the state trees against their
//     merge base (the empty tree if the histories share none), records
//     both sides changed go to resolve, finish writes the commit's metadata,
//     and the commit has both tips as parents, so both audit trails stay
//     in history. Its clock is one more than the larger of the two.
func (s *Store) Merge(ctx context.Context, rev string, resolve Resolver, finish MergeFunc) (MergeResult, error) {
	return s.merge(ctx, rev, resolve, nil, finish)
}

// Check is how MergeValidated checks what a merge would bring in from
// elsewhere (a remote's state) before anything of it becomes local.
type Check struct {
	// Validate checks every record that would be new or changed.
	Validate Validator
	// Layout is what a state tree may hold (checkShape), and which
	// records a merge keeps whatever the other side did (mergeKept); nil
	// checks git's rules and the size bounds only.
	Layout *Layout
	// Commit checks every incoming commit, after the store's own checks of
	// its message and signatures (checkCommits); nil: those only. A
	// merge calls it beside Validate, from another goroutine
	// (checkCommitsAside).
	Commit CommitValidator
	// archived is the record archives' index the merge uses (nil: one of
	// its own): Sync passes the one its adoption of the fetched archives
	// uses next, so an archive the merge checked is not walked again.
	archived *archivedIndex
}

// MergeValidated is Merge that first checks what the merge would bring in
// (adopted, fast-forwarded or merged): that rev names a commit, its clock
// (checkClock), its tree's shape against git's rules and check.Layout
// (checkShape), and with check.Validate every record that differs. If any
// check fails nothing changes and the error wraps ErrInvalidState, naming
// what is wrong. A fast-forward that would drop records of a Keep directory
// becomes a merge that keeps them (case 3 with our tip as the base).
func (s *Store) MergeValidated(ctx context.Context, rev string, resolve Resolver, check Check, finish MergeFunc) (MergeResult, error) {
	if check.Layout == nil {
		check.Layout = &Layout{}
	}
	return s.merge(ctx, rev, resolve, &check, finish)
}

// merge is Merge and MergeValidated; a nil check checks nothing.
func (s *Store) merge(ctx context.Context, rev string, resolve Resolver, check *Check, finish MergeFunc) (MergeResult, error) {
	// git codex's own refs (sync passes a remote-tracking one) point at
	// commits and are read directly, without a git process.
	var theirs plumbing.Hash
	var ok bool
	var err error
	if strings.HasPrefix(rev, "refs/codex/") {
		theirs, ok, err = gitrepo.ReadRef(s.commonDir, rev)
	}
	if err == nil && !ok {
		theirs, err = s.resolve(ctx, rev)
	}
	if err != nil {
		return MergeResult{}, err
	}
	if check != nil {
		if err := s.checkType(theirs, plumbing.CommitObject); err != nil {
			return MergeResult{}, fmt.Errorf("gitstate: %w: %s: %v", ErrInvalidState, rev, err)
		}
	}
	if err := s.lockWriter(); err != nil {
		return MergeResult{}, err
	}
	defer s.unlockWriter()
	ours, ok, err := gitrepo.ReadRef(s.commonDir, RefState)
	if err != nil {
		return MergeResult{}, err
	}
	if !ok {
		ours = plumbing.ZeroHash
	}
	if ok && ours == theirs {
		return MergeResult{Status: MergeUpToDate, Commit: ours.String()}, nil
	}
	// one git process tells both ancestries, how far theirs is ahead,
	// and which commits it brings (checkCommits reads them)
	ahead, incoming, err := s.aheadBehind(ctx, ours, theirs)
	if err != nil {
		return MergeResult{}, err
	}
	behind := uint64(len(incoming))
	if ok && behind == 0 {
		// theirs is in our history
		return MergeResult{Status: MergeUpToDate, Commit: ours.String()}, nil
	}
	if ok && ahead > 0 {
		// a merge: its base must be in the history this repository has
		if err := s.checkBaseHere(ctx, ours, theirs); err != nil {
			return MergeResult{}, err
		}
	}
	var validate Validator
	var layout *Layout
	var archived *archivedIndex
	ff := !ok || ahead == 0
	// Three checks read side by side on the machine's two CPUs, each on a
	// reader of its own: the incoming commits (checkCommitsAside), the
	// incoming tree's shape and then, for what looks like a fast-forward,
	// its records (checkTreesAside), and here, on the store's reader, the
	// records a fast-forward would drop (dropsKept, with the archives'
	// index). The verdicts are reported in the order the checks were made
	// one after the other before: checkIncoming's, checkCommits',
	// dropsKept's, validateCommits'.
	commits := func() error { return nil }
	trees := func() treeVerdicts { return treeVerdicts{} }
	if check != nil {
		validate, layout, archived = check.Validate, check.Layout, check.archived
		commits = s.checkCommitsAside(incoming, check.Commit)
		defer commits() // nothing of the merge's reads outlives it
		var aside bool
		trees, aside = s.checkTreesAside(ours, theirs, behind, layout, validate, ff)
		defer trees()
		if !aside {
			// checked here, at once: nothing else reads a tree that failed
			if v := trees(); v.incoming != nil {
				return MergeResult{}, v.incoming
			}
		}
	}
	if archived == nil && layout != nil {
		archived = s.archivedIndex(ctx, layout)
	}
	archived.bringing(theirs, incoming)
	var dropsErr error
	if ff && ok && layout != nil {
		// Beside checkTreesAside, this walk may read a tree whose shape
		// fails; it reads only trees (and the archives' objects), which
		// git checked as they came (a sync's fetch.fsckObjects), and its
		// verdict counts only after checkIncoming's.
		var drops bool
		drops, dropsErr = s.dropsKept(ctx, ours, theirs, layout, archived)
		ff = !drops
	}
	tv := trees()
	if tv.incoming != nil {
		return MergeResult{}, tv.incoming
	}
	if err := commits(); err != nil {
		return MergeResult{}, err
	}
	if dropsErr != nil {
		return MergeResult{}, dropsErr
	}
	if ff {
		// validated beside dropsKept, as a fast-forward's records are;
		// a merge instead validates the merged tree (mergeCommit)
		if tv.validate != nil {
			return MergeResult{}, tv.validate
		}
		if err := s.swapRef(RefState, ours, theirs); err != nil {
			return MergeResult{}, err
		}
		return MergeResult{Status: MergeFastForward, Commit: theirs.String()}, nil
	}
	c, report, err := s.mergeCommit(ctx, ours, theirs, resolve, validate, layout, archived, finish)
	if err != nil {
		return MergeResult{}, err
	}
	return MergeResult{Status: MergeMerged, Commit: c.Hash, Report: report}, nil
}

func (s *Store) mergeCommit(ctx context.Context, ours, theirs plumbing.Hash, resolve Resolver, validate Validator, layout *Layout, archived *archivedIndex, finish MergeFunc) (Commit, MergeReport, error) {
	base, err := s.mergeBase(ctx, ours, theirs)
	if err != nil {
		return Commit{}, MergeReport{}, err
	}
	var trees [3]plumbing.Hash
	var clock Clock
	for i, h := range []plumbing.Hash{base, ours, theirs} {
		if h.IsZero() {
			continue
		}
		c, err := s.readCommit(h)
		if err != nil {
			return Commit{}, MergeReport{}, err
		}
		trees[i] = c.TreeHash
		if i > 0 {
			// The base is in both histories, so in any history git codex
			// wrote its clock is below both tips': witnessing the tips is
			// enough, and a clock buried in shared history (which the check
			// of an incoming tip does not see) cannot pin the merge's.
			clock = clock.Witness(clockOf(c.Message))
		}
	}
	root, report, err := s.mergeTrees(ctx, trees[0], trees[1], trees[2], [2]plumbing.Hash{ours, theirs}, resolve, layout, archived)
	if err != nil {
		return Commit{}, MergeReport{}, err
	}
	if err := s.validateChange(trees[1], root, validate); err != nil {
		return Commit{}, report, err
	}
	merged := &Snapshot{s: s, commit: ours, root: root, clock: clock, trees: map[plumbing.Hash]*gitrepo.Tree{}}
	tx := &Tx{base: merged, pending: map[string][]byte{}, clock: clock.Next(), now: s.now(), merged: []plumbing.Hash{theirs}}
	if err := finish(tx, report); err != nil {
		tx.abort()
		return Commit{}, report, errors.Join(append([]error{err}, tx.runUndo(ctx)...)...)
	}
	if tx.meta == nil {
		return Commit{}, report, ErrNoMeta
	}
	// what the merge refused to let an archive delete is said where the
	// merge is audited, whatever the finisher wrote
	tx.meta.Trailers = append(tx.meta.Trailers, refusedTrailers(report.ArchiveRefused)...)
	c, err := s.commit(tx, ours)
	return c, report, err
}

// aheadBehind counts the commits only ours has and lists those only
// theirs has, newest first (ours zero: no local state, every commit of
// theirs is new), in one walk of git's (`rev-list --left-right`): a
// day-behind sync brings ~4,600 commits, and walking them once for the
// counts and again for the list cost a second git process the same walk.
func (s *Store) aheadBehind(ctx context.Context, ours, theirs plumbing.Hash) (ahead uint64, incoming []string, err error) {
	var out bytes.Buffer
	if ours.IsZero() {
		if err := s.git(ctx, &out, "rev-list", theirs.String()); err != nil {
			return 0, nil, err
		}
		return 0, strings.Fields(out.String()), nil
	}
	if err := s.git(ctx, &out, "rev-list", "--left-right", ours.String()+"..."+theirs.String()); err != nil {
		return 0, nil, err
	}
	for _, line := range strings.Fields(out.String()) {
		switch {
		case len(line) == 41 && line[0] == '<':
			ahead++
		case len(line) == 41 && line[0] == '>':
			incoming = append(incoming, line[1:])
		default:
			return 0, nil, fmt.Errorf("gitstate: rev-list --left-right: %q", line)
		}
	}
	return ahead, incoming, nil
}

// mergeBase returns a best common ancestor of a and b, the same one in
// either order, or the zero hash when their histories share none (two
// states initialised apart).
func (s *Store) mergeBase(ctx context.Context, a, b plumbing.Hash) (plumbing.Hash, error) {
	var out bytes.Buffer
	err := s.git(ctx, &out, "merge-base", "--all", a.String(), b.String())
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	// After criss-cross syncs there are several best bases, and plain
	// `git merge-base` picks one by argument order. Taking the smallest
	// hash makes the choice the same on both machines.
	bases := strings.Fields(out.String())
	if len(bases) == 0 {
		return plumbing.ZeroHash, nil
	}
	return plumbing.NewHash(slices.Min(bases)), nil
}

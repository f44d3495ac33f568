package gitstate

import (
	"context"
	"encoding/json"
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

// RecordArchivePrefix names the archives of old records (retention,
// docs/STATE.md): refs/codex/archive/records-<yyyy-mm-dd>-<hex>, one
// parentless commit per `git codex archive`, whose tree holds the records it
// took off the tip at their state paths. They live under ArchivePrefix, so
// sync copies them as it copies archived cycles: once, never overwritten.
const RecordArchivePrefix = ArchivePrefix + "records-"

// RecordArchiveManifest is the file at the root of a record archive that
// says where its records came from and how many of each kind it holds.
const RecordArchiveManifest = "manifest.json"

// TrailerArchiveRefused is a trailer of a merge commit, one per record that
// a side deleted and that some record archive holds, where no archive
// passed the checks that let a deletion stand (archiveIndex.stands): the
// record stayed. Its value is "<path>: <why> (<archive ref>)".
const TrailerArchiveRefused = "Codex-Archive-Refused"

// maxRefusedTrailers bounds the Codex-Archive-Refused trailers of one merge
// commit; the rest are counted in a last one.
const maxRefusedTrailers = 20

// ArchiveRule reports whether `archive` could have taken this version of a
// record off the tip: its kind is one retention takes and the record has
// ended (a mail read, an instance ended and cleaned up, a GitHub call done
// or failed, a conflict settled). A merge applies it to the archived
// version of a record before it lets a deletion of that record stand. It
// lives with the record kinds (tools), not here: the store cannot read
// their fields.
type ArchiveRule func(path string, record []byte) bool

// retentionOf is the retention name of a record at path: that of the
// layout's directory holding it ("" when `archive` never takes records
// there, or there is no layout). A record archive holding a record of no
// retention name is a lie: no deletion it names stands.
func (l *Layout) retentionOf(path string) string {
	if l == nil {
		return ""
	}
	for _, d := range l.Dirs {
		if d.Retention != "" && strings.HasPrefix(path, d.Dir+"/") {
			return d.Retention
		}
	}
	return ""
}

// recordManifest is what a merge reads of a record archive's manifest.
type recordManifest struct {
	StateTip string         `json:"state_tip"`
	Records  map[string]int `json:"records"`
}

// recordArchive is one record archive as a merge sees it, checked once.
type recordArchive struct {
	ref    string
	commit plumbing.Hash
	tree   plumbing.Hash
	// order is the archive's place in archivedIndex.archives (refusals
	// are reported in that order, whichever archive was tried first)
	order int
	// checked: bad and tip are set; bad says why the archive is not to be
	// believed ("" when it is), tip is the state commit its manifest names
	checked bool
	bad     string
	tip     plumbing.Hash
	// lasting: bad is a verdict on what never changes (the archive's
	// objects, its state commit's, the layout), to remember
	// (archiverefused.go); remembered: bad was remembered, not found now
	lasting, remembered bool
}

// ArchiveRefusal is a record one side of a merge deleted and an archive
// that holds it but did not pass the checks that let the deletion stand
// (one per archive that holds it, when none passed): the record stayed (it
// is in MergeReport.Kept too).
type ArchiveRefusal struct {
	Path string
	// Archive is the archive's ref, and Reason why it did not count.
	Archive, Reason string
}

// archivedIndex answers whether a deletion of a kept record stands because
// the side that deleted it archived it (retention). Any repository a sync
// reaches can push an archive ref, so holding the record is not enough: a
// deletion stands only when an archive that holds the record
//
//   - has a manifest naming a state commit (state_tip) this repository
//     holds, in the history of the side that deleted the record;
//   - holds nothing but records of the kinds `archive` takes, exactly as
//     many of each as the manifest says, each byte-identical to the
//     version at that state commit (the manifest does not lie);
//   - holds a version of this record that has ended, by the rule that
//     `archive` itself uses (Layout.Archivable), when the caller gives it.
//
// The merge checks besides that the other side still has the base's
// version, unchanged (archivedAway). It reads the archive refs on first use
// only, so a merge without such a deletion reads none, and checks each
// archive once.
type archivedIndex struct {
	s    *Store
	ctx  context.Context // for git merge-base; the index lives for one merge
	rule ArchiveRule
	// layout says which directories' records an archive may hold
	// (DirLayout.Retention); nil: none, so no archive checks out
	layout   *Layout
	loaded   bool
	archives []*recordArchive
	// newest are the archives, the newest first by the day in their
	// names: a deletion is looked for there first (see stands)
	newest []*recordArchive
	// byCommit are the archives checked or listed, by commit: a sync's
	// adoption of the archive its merge checked reuses that verdict
	byCommit map[plumbing.Hash]*recordArchive
	err      error
	// ancestor caches "state commit is in the history of tip"
	ancestor map[[2]plumbing.Hash]bool
	// brought are the commits a merge brings (rev-list ours..theirs, as
	// hex), all in the history of broughtBy: inHistory answers for them
	// without git (see bringing)
	brought   []string
	broughtBy plumbing.Hash
	// trees caches the trees read, by name: a merge that lets thousands of
	// archived records go looks each up in the same few trees
	trees map[plumbing.Hash]map[string]gitrepo.TreeEntry
	// refused are the refusals remembered in the repository's config,
	// read on first use, and print the layout's retentionPrint
	refused map[plumbing.Hash]string
	print   string
}

func (s *Store) archivedIndex(ctx context.Context, layout *Layout) *archivedIndex {
	a := &archivedIndex{s: s, ctx: ctx, layout: layout, ancestor: map[[2]plumbing.Hash]bool{}, trees: map[plumbing.Hash]map[string]gitrepo.TreeEntry{}}
	if layout != nil {
		a.rule = layout.Archivable
	}
	return a
}

// load lists the record archives: this repository's and every remote's
// (refs/codex/remotes/<remote>/archive/records-*), which a sync fetched
// before it merges.
func (a *archivedIndex) load() error {
	if a.loaded {
		return a.err
	}
	a.loaded = true
	var refs []string
	// ArchivePrefix is a directory of refs; RecordArchivePrefix only a
	// prefix of names in it
	own, err := gitrepo.ListRefs(a.s.commonDir, ArchivePrefix)
	if err != nil {
		a.err = err
		return err
	}
	for _, r := range own {
		if strings.HasPrefix(r, RecordArchivePrefix) {
			refs = append(refs, r)
		}
	}
	fetched, err := gitrepo.ListRefs(a.s.commonDir, remotesPrefix)
	if err != nil {
		a.err = err
		return err
	}
	for _, r := range fetched {
		if rest := strings.TrimPrefix(r, remotesPrefix); strings.Contains(rest, "/archive/records-") {
			refs = append(refs, r)
		}
	}
	seen := map[plumbing.Hash]bool{}
	for _, r := range refs {
		h, ok, err := gitrepo.ReadRef(a.s.commonDir, r)
		if err != nil || !ok {
			continue // a ref that vanished meanwhile holds nothing we need
		}
		c, err := a.s.readCommit(h)
		if err != nil || seen[c.TreeHash] {
			continue
		}
		seen[c.TreeHash] = true
		ar := a.known(r, h, c.TreeHash)
		ar.order = len(a.archives)
		a.archives = append(a.archives, ar)
	}
	a.newest = slices.Clone(a.archives)
	slices.SortStableFunc(a.newest, func(x, y *recordArchive) int {
		return strings.Compare(y.ref[strings.LastIndexByte(y.ref, '/')+1:], x.ref[strings.LastIndexByte(x.ref, '/')+1:])
	})
	return nil
}

// known is the archive at commit c (ref, tree) as this index has seen it,
// checked or not, or a new one.
func (a *archivedIndex) known(ref string, c, tree plumbing.Hash) *recordArchive {
	if ar, ok := a.byCommit[c]; ok && ar.tree == tree {
		return ar
	}
	if a.byCommit == nil {
		a.byCommit = map[plumbing.Hash]*recordArchive{}
	}
	ar := &recordArchive{ref: ref, commit: c, tree: tree}
	a.byCommit[c] = ar
	return ar
}

// stands reports whether the deletion of the record at path by the side
// whose tip is deleter stands because an archive holds it (see
// archivedIndex); have is the version the other side, whose tip is keeper,
// has unchanged since the merge base. When archives hold it but none passes, refused says which
// and why, one per archive; when none holds it, refused is empty (a plain
// deletion).
func (a *archivedIndex) stands(path string, have, keeper, deleter plumbing.Hash) (bool, []ArchiveRefusal, error) {
	if a == nil {
		return false, nil, nil
	}
	if err := a.load(); err != nil {
		return false, nil, err
	}
	parts := strings.Split(path, "/")
	// Newest first: the record a side deleted is mostly in the archive
	// that took it off that side's tip, the newest one, where the
	// oldest-first order looked it up in every older archive before (a
	// tree read per directory on its path in each: a day-behind sync's
	// check of a day's ~1,850 archived records grew with the number of
	// days archived, docs/PERFORMANCE.md, "The day-behind sync over a
	// week"). The verdict is the same in any order: it stands if any
	// archive passes, and the refusals are all of them, in a.archives'
	// order.
	type refusedBy struct {
		order int
		r     ArchiveRefusal
	}
	var refusals []refusedBy
	for _, ar := range a.newest {
		blob, err := a.lookup(ar.tree, parts)
		if err != nil {
			return false, nil, err
		}
		if blob.IsZero() {
			continue
		}
		why, err := a.why(ar, path, blob, have, keeper, deleter)
		if err != nil {
			return false, nil, err
		}
		if why == "" {
			return true, nil, nil
		}
		refusals = append(refusals, refusedBy{ar.order, ArchiveRefusal{Path: path, Archive: ar.ref, Reason: why}})
	}
	sort.Slice(refusals, func(i, j int) bool { return refusals[i].order < refusals[j].order })
	var refused []ArchiveRefusal
	for _, r := range refusals {
		refused = append(refused, r.r)
	}
	return false, refused, nil
}

// why says why the archive ar, which holds blob at path, does not let the
// deleter's deletion of that record stand ("": it does).
func (a *archivedIndex) why(ar *recordArchive, path string, blob, have, keeper, deleter plumbing.Hash) (string, error) {
	if err := a.check(ar); err != nil {
		return "", err
	}
	if ar.bad != "" {
		return ar.bad, nil
	}
	in, err := a.inHistory(ar.tip, deleter)
	if err != nil {
		return "", err
	}
	if !in {
		return fmt.Sprintf("its state commit %s is not in the history of the side that deleted the record", ar.tip), nil
	}
	if blob != have {
		// another version than ours: one the deleting side made that we
		// have not seen (a mail read, then archived) will do, as its
		// change would in any merge; not one from a state commit we have
		// seen and moved on from (an instance archived as it was when it
		// ended, before it was started again)
		seen, err := a.inHistory(ar.tip, keeper)
		if err != nil {
			return "", err
		}
		if seen {
			return fmt.Sprintf("it holds an older version than the side that kept the record: its state commit %s is in that side's history, and the record changed since", ar.tip), nil
		}
	}
	if a.rule != nil {
		data, err := a.s.readBlob(blob)
		if err != nil {
			return "", err
		}
		if !a.rule(path, data) {
			return "the archived record has not ended: archive does not take it", nil
		}
	}
	return "", nil
}

// refusal says why the record archive at ref (commit c) does not pass
// check ("": it does), what sync asks before it adopts a peer's archive as
// its own; remember is true for a lasting refusal found now, not
// remembered yet.
func (a *archivedIndex) refusal(ref string, c plumbing.Hash) (why string, remember bool, err error) {
	commit, err := a.s.readCommit(c)
	if err != nil {
		return "not fetched whole", false, nil // nothing to adopt
	}
	ar := a.known(ref, c, commit.TreeHash)
	if err := a.check(ar); err != nil {
		return "", false, err
	}
	return ar.bad, ar.bad != "" && ar.lasting && !ar.remembered, nil
}

// check reads the archive's manifest and compares the archive with the
// state commit it names, once: ar.bad says what is wrong, if anything.
// Only a failure to read what is there is an error.
func (a *archivedIndex) check(ar *recordArchive) error {
	if ar.checked {
		return nil
	}
	ar.checked = true
	why, ok, err := a.remembered(ar.commit)
	if err != nil {
		return err
	}
	if ok {
		ar.bad, ar.lasting, ar.remembered = why, true, true
		return nil
	}
	if a.s.archiveCheckHook != nil {
		a.s.archiveCheckHook(ar.ref)
	}
	// every refusal below lasts but that of a state commit not here yet
	ar.lasting = true
	mblob, err := a.lookup(ar.tree, []string{RecordArchiveManifest})
	if err != nil {
		return err
	}
	if mblob.IsZero() {
		ar.bad = "it has no " + RecordArchiveManifest
		return nil
	}
	data, err := a.s.readBlob(mblob)
	if err != nil {
		return err
	}
	var man recordManifest
	if err := json.Unmarshal(data, &man); err != nil {
		ar.bad = fmt.Sprintf("its %s is not a manifest: %v", RecordArchiveManifest, err)
		return nil
	}
	if !plumbing.IsHash(man.StateTip) {
		ar.bad = fmt.Sprintf("its manifest names no state commit (state_tip %q)", man.StateTip)
		return nil
	}
	ar.tip = plumbing.NewHash(man.StateTip)
	tip, err := a.s.readCommit(ar.tip)
	if err != nil {
		ar.bad = fmt.Sprintf("its manifest names the state commit %s, which this repository does not have", man.StateTip)
		ar.lasting = false // a later fetch may bring it
		return nil
	}
	counts := map[string]int{}
	// the archive's tree and the state commit's are walked side by side,
	// so each tree is read once however many records the archive holds
	var walk func(prefix []string, tree, state plumbing.Hash) (string, error)
	walk = func(prefix []string, tree, state plumbing.Hash) (string, error) {
		t, err := a.s.readTree(tree)
		if err != nil {
			return "", err
		}
		at := map[string]gitrepo.TreeEntry{}
		if !state.IsZero() {
			if at, err = a.entries(state); err != nil {
				return "", err
			}
		}
		for _, e := range t.Entries {
			parts := append(prefix[:len(prefix):len(prefix)], e.Name)
			path := strings.Join(parts, "/")
			was, ok := at[e.Name]
			switch {
			case e.Mode == filemode.Dir:
				sub := plumbing.ZeroHash
				if ok && was.Mode == filemode.Dir {
					sub = was.Hash
				}
				if bad, err := walk(parts, e.Hash, sub); bad != "" || err != nil {
					return bad, err
				}
				continue
			case path == RecordArchiveManifest:
				continue
			case e.Mode != filemode.Regular && e.Mode != filemode.Executable:
				return fmt.Sprintf("it holds %s, which is not a file", path), nil
			}
			kind := a.layout.retentionOf(path)
			if kind == "" {
				return fmt.Sprintf("it holds %s, a record of no kind archive takes", path), nil
			}
			if !ok || was.Mode == filemode.Dir || was.Hash != e.Hash {
				return fmt.Sprintf("it holds %s, which its state commit %s does not have as archived", path, ar.tip), nil
			}
			counts[kind]++
		}
		return "", nil
	}
	bad, err := walk(nil, ar.tree, tip.TreeHash)
	if err != nil {
		return err
	}
	if bad == "" && !sameCounts(counts, man.Records) {
		bad = fmt.Sprintf("its manifest counts the records %s, but it holds %s", countsText(man.Records), countsText(counts))
	}
	ar.bad = bad
	return nil
}

// sameCounts compares counts by kind, a kind counted 0 as one not counted.
func sameCounts(a, b map[string]int) bool {
	for k, n := range a {
		if b[k] != n {
			return false
		}
	}
	for k, n := range b {
		if a[k] != n {
			return false
		}
	}
	return true
}

func countsText(c map[string]int) string {
	var parts []string
	for k, n := range c {
		if n != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// bringing tells the index the commits a merge brings from theirs
// (incoming, as aheadBehind lists them): each is in theirs' history, which
// inHistory then knows without a git process. The archive a day-behind
// sync checks names a state commit of the day it brings
// (docs/PERFORMANCE.md, "The day-behind sync side by side on two CPUs").
func (a *archivedIndex) bringing(theirs plumbing.Hash, incoming []string) {
	if a != nil {
		a.broughtBy, a.brought = theirs, incoming
	}
}

// inHistory reports whether the commit c is tip or one of its ancestors.
func (a *archivedIndex) inHistory(c, tip plumbing.Hash) (bool, error) {
	if tip.IsZero() {
		return false, nil
	}
	if c == tip {
		return true, nil
	}
	key := [2]plumbing.Hash{c, tip}
	if in, ok := a.ancestor[key]; ok {
		return in, nil
	}
	if tip == a.broughtBy && a.brought != nil {
		for _, id := range a.brought {
			a.ancestor[[2]plumbing.Hash{plumbing.NewHash(id), tip}] = true
		}
		a.brought = nil // learnt
		if a.ancestor[key] {
			return true, nil
		}
	}
	err := a.s.git(a.ctx, nil, "merge-base", "--is-ancestor", c.String(), tip.String())
	var ee *exec.ExitError
	in := err == nil
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		err = nil
	}
	if err != nil {
		return false, err
	}
	a.ancestor[key] = in
	return in, nil
}

// lookup finds the entry at parts below the tree t (zero: none, or a
// directory where a file was asked for, or the reverse).
func (a *archivedIndex) lookup(t plumbing.Hash, parts []string) (plumbing.Hash, error) {
	for i, name := range parts {
		entries, err := a.entries(t)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		next, ok := entries[name]
		if !ok || (next.Mode == filemode.Dir) != (i < len(parts)-1) {
			return plumbing.ZeroHash, nil
		}
		t = next.Hash
	}
	return t, nil
}

// entries reads the tree t, by name, once per merge.
func (a *archivedIndex) entries(t plumbing.Hash) (map[string]gitrepo.TreeEntry, error) {
	if es, ok := a.trees[t]; ok {
		return es, nil
	}
	tree, err := a.s.readTree(t)
	if err != nil {
		return nil, err
	}
	es := make(map[string]gitrepo.TreeEntry, len(tree.Entries))
	for _, e := range tree.Entries {
		es[e.Name] = e
	}
	a.trees[t] = es
	return es, nil
}

// allArchived reports whether the deletion of every record below the tree
// t (at path, as the side at keeper has it) by the side at deleter stands:
// a directory one side removed whole.
func (a *archivedIndex) allArchived(path string, t, keeper, deleter plumbing.Hash) (bool, error) {
	tree, err := a.s.readTree(t)
	if err != nil {
		return false, err
	}
	for _, e := range tree.Entries {
		child := path + "/" + e.Name
		var ok bool
		if e.Mode == filemode.Dir {
			ok, err = a.allArchived(child, e.Hash, keeper, deleter)
		} else {
			ok, _, err = a.stands(child, e.Hash, keeper, deleter)
		}
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// archivedAway reports whether a kept record that one side deleted (o or t
// absent) was archived by that side: the other side still has the base's
// version, unchanged, and an archive lets the deletion stand
// (archivedIndex). Then the deletion stands, as in any three-way merge;
// otherwise the record stays (mergeKept), and an archive that did not pass
// is reported.
func (m *merger) archivedAway(path string, b, o, t node) (bool, error) {
	present, keeper, deleter := o, m.tips[0], m.tips[1]
	if o.absent() {
		present, keeper, deleter = t, m.tips[1], m.tips[0]
	}
	if b.absent() || b.dir || present != b {
		return false, nil
	}
	ok, refused, err := m.archived.stands(path, present.hash, keeper, deleter)
	m.report.ArchiveRefused = append(m.report.ArchiveRefused, refused...)
	return ok, err
}

// archivedDrop reports whether the entry e at parts, which the side at
// keeper has and the side at deleter no longer has, went into a record
// archive whole (a record, or a directory of them) in a way that lets the
// deletion stand.
func archivedDrop(a *archivedIndex, parts []string, e gitrepo.TreeEntry, keeper, deleter plumbing.Hash) (bool, error) {
	path := strings.Join(parts, "/")
	if e.Mode == filemode.Dir {
		return a.allArchived(path, e.Hash, keeper, deleter)
	}
	ok, _, err := a.stands(path, e.Hash, keeper, deleter)
	return ok, err
}

// refusedTrailers are the Codex-Archive-Refused trailers of a merge commit.
func refusedTrailers(refused []ArchiveRefusal) []Trailer {
	var out []Trailer
	for i, r := range refused {
		if i == maxRefusedTrailers {
			out = append(out, Trailer{Key: TrailerArchiveRefused, Value: fmt.Sprintf("and %d more", len(refused)-i)})
			break
		}
		out = append(out, Trailer{Key: TrailerArchiveRefused, Value: fmt.Sprintf("%s: %s (%s)", r.Path, r.Reason, r.Archive)})
	}
	return out
}

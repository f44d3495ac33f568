package gitstate

import (
	"bytes"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// Event is one state commit read back as an audit record.
type Event struct {
	Commit  string
	Parents []string
	Time    time.Time
	Author  Signature
	Clock   Clock
	// Changed says the commit's tree differs from its first parent's: the
	// call changed the state (a root commit always does). Reads and
	// refusals are commits too, with their parent's tree.
	Changed bool
	// CutOff says the history stops here in this repository: the commit
	// has parents, but a shallow fetch left them out (git's shallow file
	// lists it). Changed is then false: what the call changed is not
	// known here.
	CutOff bool
	// FoldedIn is, for a read of a day that retention folded
	// (FoldReads), the fold commit whose reads.jsonl holds it: the read's
	// own commit is on no ref any more, and git may have dropped it.
	FoldedIn string
	Meta
}

// Events calls fn for the commits reachable from rev ("" for the tip),
// newest first by commit time and following every parent, so after a sync
// the events of both sides appear. fn returns false to stop.
func (s *Store) Events(ctx context.Context, rev string, fn func(Event) bool) error {
	return s.EventsOf(ctx, []string{rev}, fn)
}

// EventsOf is Events from several revisions at once, their histories
// interleaved newest first: the state and the reads refs (ReadsRefs) for
// a log that shows reads too. A reads day that retention folded into one
// commit (FoldReads) shows as the reads its reads.jsonl holds, each in its
// place by time and marked FoldedIn, not as the fold commit.
func (s *Store) EventsOf(ctx context.Context, revs []string, fn func(Event) bool) error {
	return s.walkEvents(ctx, revs, s.readCommit, fn)
}

// walkEvents is EventsOf reading each commit with read: the store's
// readCommit, or a reader that keeps what it read for the next process
// (KeptCommits).
func (s *Store) walkEvents(ctx context.Context, revs []string, read func(plumbing.Hash) (*gitrepo.Commit, error), fn func(Event) bool) error {
	// A queue ordered by commit time: the newest commit not yet shown
	// comes next, each commit once (git log's default order).
	q := &commitQueue{}
	seen := map[plumbing.Hash]bool{}
	for _, rev := range revs {
		h, err := s.resolve(ctx, rev)
		if err != nil {
			return err
		}
		if seen[h] {
			continue
		}
		start, err := read(h)
		if err != nil {
			return err
		}
		seen[h] = true
		heap.Push(q, foldQueuedAtItsNewestRead(start))
	}
	folded := map[plumbing.Hash]plumbing.Hash{}     // a folded read -> its fold
	unfolded := map[plumbing.Hash]*gitrepo.Commit{} // a folded read, as it was
	for q.Len() > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		c := heap.Pop(q).(*gitrepo.Commit)
		if fold, ok := folded[c.Hash]; ok {
			// a read a fold holds: its parent is in the fold too
			for _, p := range c.ParentHashes {
				if r, ok := unfolded[p]; ok && !seen[p] {
					seen[p] = true
					heap.Push(q, r)
				}
			}
			ev := eventOf(c)
			ev.FoldedIn = fold.String()
			if !fn(ev) {
				return nil
			}
			continue
		}
		// a folded day shows as the reads it holds, each in its place
		// among the other events, not as the one commit retention wrote
		reads, isFold, err := s.unfold(c)
		if err != nil {
			return fmt.Errorf("gitstate: read the fold %s: %w", c.Hash, err)
		}
		if isFold {
			// queued as the chain was: the newest read now, each
			// read's parent once it is shown
			for _, r := range reads {
				folded[r.Hash] = c.Hash
				unfolded[r.Hash] = r
			}
			if n := len(reads); n > 0 && !seen[reads[n-1].Hash] {
				seen[reads[n-1].Hash] = true
				heap.Push(q, reads[n-1])
			}
			continue
		}
		if c.Shallow {
			ev := eventOf(c)
			ev.CutOff = true // what it changed is not known here
			if !fn(ev) {
				return nil
			}
			continue
		}
		for _, p := range c.Parents() {
			if seen[p] {
				continue
			}
			seen[p] = true
			pc, err := read(p)
			if err != nil {
				return fmt.Errorf("gitstate: walk history: %w", err)
			}
			heap.Push(q, pc)
		}
		ev := eventOf(c)
		ev.Changed = !ev.IsRead() && treeChanged(read, c)
		if !fn(ev) {
			return nil
		}
	}
	return nil
}

// foldQueuedAtItsNewestRead is c as the walk queues it. A fold of a
// day's reads (FoldReads) is committed when retention ran, days after the
// reads it holds, and its commit time would put it first in a walk from
// the tips: the whole day unfolded (a day of a team's polling is ~20,000
// reads, a reads.jsonl of megabytes to inflate and parse) before the
// newest event was shown, by every status and log --reads of the days
// after (issue 27). A fold says when its newest read was made
// (TrailerFoldedUntil), and is queued then: unfolded only once the walk
// reaches its reads. A fold without it (written before it was added) is
// queued at its commit time, as before; any other commit as it is.
func foldQueuedAtItsNewestRead(c *gitrepo.Commit) *gitrepo.Commit {
	if len(c.ParentHashes) != 0 || trailerIn(c.Message, TrailerFolded) == "" {
		return c
	}
	until, err := time.Parse(time.RFC3339Nano, trailerIn(c.Message, TrailerFoldedUntil))
	if err != nil || !until.Before(c.Committer.When) {
		return c
	}
	// a nanosecond past it: before every commit of that second (commit
	// times are whole seconds), so that its newest read, once unfolded,
	// is ordered among them by the queue's own rules
	q := *c
	q.Committer.When = until.Add(time.Nanosecond)
	return &q
}

// commitQueue is a heap of commits, newest committer time first. Commit
// times are seconds, and a busy second holds many calls, so ties are
// broken the same way however the commits were found (a reads chain
// walked, or the same reads unfolded from its fold): the higher clock
// first; at one clock a read (Codex-Read-At) before the change whose
// state it read; then by hash. A commit's parents are queued only once it
// is shown, so a child always comes before its parent.
type commitQueue []*gitrepo.Commit

func (q commitQueue) Len() int { return len(q) }
func (q commitQueue) Less(i, j int) bool {
	a, b := q[i], q[j]
	if !a.Committer.When.Equal(b.Committer.When) {
		return a.Committer.When.After(b.Committer.When)
	}
	if ca, cb := clockOf(a.Message), clockOf(b.Message); ca != cb {
		return ca > cb
	}
	if ra, rb := trailerIn(a.Message, TrailerReadAt) != "", trailerIn(b.Message, TrailerReadAt) != ""; ra != rb {
		return ra
	}
	return bytes.Compare(a.Hash[:], b.Hash[:]) > 0
}
func (q commitQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)   { *q = append(*q, x.(*gitrepo.Commit)) }
func (q *commitQueue) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}

// Event reads one commit as an event.
func (s *Store) Event(ctx context.Context, rev string) (Event, error) {
	h, err := s.resolve(ctx, rev)
	if errors.Is(err, ErrNotFound) {
		// a read of a folded day, whose own commit git may have pruned
		if r, fold, ok, ferr := s.foldedRead(ctx, rev); ferr != nil {
			return Event{}, ferr
		} else if ok {
			ev := eventOf(r)
			ev.FoldedIn = fold.String()
			return ev, nil
		}
	}
	if err != nil {
		return Event{}, err
	}
	c, err := s.readCommit(h)
	if err != nil {
		return Event{}, err
	}
	ev := eventOf(c)
	if c.Shallow {
		ev.CutOff = true
		return ev, nil
	}
	ev.Changed = !ev.IsRead() && treeChanged(s.readCommit, c)
	return ev, nil
}

// treeChanged reports whether c's tree differs from its first parent's
// (read with read). A parent that cannot be read (a shallow clone) counts
// as a change.
func treeChanged(read func(plumbing.Hash) (*gitrepo.Commit, error), c *gitrepo.Commit) bool {
	if len(c.ParentHashes) == 0 {
		return true
	}
	p, err := read(c.ParentHashes[0])
	if err != nil {
		return true
	}
	return p.TreeHash != c.TreeHash
}

func eventOf(c *gitrepo.Commit) Event {
	e := Event{
		Commit: c.Hash.String(),
		Time:   c.Committer.When,
		Author: Signature{Name: c.Author.Name, Email: c.Author.Email},
		Clock:  clockOf(c.Message),
		Meta:   parseMessage(c.Message),
	}
	for _, p := range c.ParentHashes {
		e.Parents = append(e.Parents, p.String())
	}
	return e
}

// Change is one record a commit added, modified or deleted.
type Change struct {
	Path   string `json:"path"`
	Action string `json:"action"` // "add", "modify" or "delete"
}

// Changes lists the records a commit changed relative to its first parent.
func (s *Store) Changes(ctx context.Context, rev string) ([]Change, error) {
	h, err := s.resolve(ctx, rev)
	if errors.Is(err, ErrNotFound) {
		if _, _, ok, ferr := s.foldedRead(ctx, rev); ferr != nil {
			return nil, ferr
		} else if ok {
			return []Change{}, nil // a folded read changed nothing
		}
	}
	if err != nil {
		return nil, err
	}
	c, err := s.readCommit(h)
	if err != nil {
		return nil, err
	}
	out := []Change{}
	if parseMessage(c.Message).Get(TrailerReadAt) != "" {
		return out, nil // a read changed nothing; its parent is the previous read
	}
	if c.Shallow {
		// its parent was never fetched: what it changed is not known here
		return nil, &CutOffError{What: "the changes of " + short(h.String()), At: c.Committer.When}
	}
	var from plumbing.Hash
	if len(c.ParentHashes) > 0 {
		p, err := s.readCommit(c.ParentHashes[0])
		if err != nil {
			return nil, err
		}
		from = p.TreeHash
	}
	if err := s.diffTrees(ctx, "", from, c.TreeHash, &out); err != nil {
		return nil, fmt.Errorf("gitstate: diff %s: %w", h, err)
	}
	return out, nil
}

// diffTrees appends the records that differ between the trees from and to
// (zero: empty) under dir, in path order. Subtrees with equal hashes are not
// read.
func (s *Store) diffTrees(ctx context.Context, dir string, from, to plumbing.Hash, out *[]Change) error {
	if from == to {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	entries := func(h plumbing.Hash) (map[string]gitrepo.TreeEntry, error) {
		m := map[string]gitrepo.TreeEntry{}
		if h.IsZero() {
			return m, nil
		}
		t, err := s.readTree(h)
		if err != nil {
			return nil, err
		}
		for _, e := range t.Entries {
			m[e.Name] = e
		}
		return m, nil
	}
	a, err := entries(from)
	if err != nil {
		return err
	}
	b, err := entries(to)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(a)+len(b))
	for n := range a {
		names = append(names, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		ea, inA := a[n]
		eb, inB := b[n]
		p := path.Join(dir, n)
		dirA, dirB := inA && ea.Mode == filemode.Dir, inB && eb.Mode == filemode.Dir
		switch {
		case inA && inB && ea.Hash == eb.Hash && dirA == dirB:
		case inA && inB && !dirA && !dirB:
			*out = append(*out, Change{Path: p, Action: "modify"})
		default:
			var fromDir, toDir plumbing.Hash
			if dirA {
				fromDir = ea.Hash
			} else if inA {
				*out = append(*out, Change{Path: p, Action: "delete"})
			}
			if dirB {
				toDir = eb.Hash
			} else if inB {
				*out = append(*out, Change{Path: p, Action: "add"})
			}
			if err := s.diffTrees(ctx, p, fromDir, toDir, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// StateAt is the newest state commit made at or before t (by committer
// time, as Events orders them), found by `git rev-list`: a week of
// history is tens of thousands of commits, which git walks in tens of
// milliseconds and Events, reading each as an event, in seconds.
func (s *Store) StateAt(ctx context.Context, t time.Time) (string, error) {
	if _, ok, err := gitrepo.ReadRef(s.commonDir, RefState); err != nil || !ok {
		if err == nil {
			err = fmt.Errorf("gitstate: %s: %w", RefState, ErrNotInitialized)
		}
		return "", err
	}
	// In a shallow history the state before the boundary is unknown
	// here, not absent: rev-list would answer with nothing, or with a
	// boundary commit that is not the state at t.
	if at, cut, err := s.HistoryCutOff(ctx); err != nil {
		return "", err
	} else if cut && t.Before(at) {
		return "", &CutOffError{What: "the state at " + t.UTC().Format(time.RFC3339), At: at}
	}
	var out strings.Builder
	if err := s.git(ctx, &out, "rev-list", "-1", fmt.Sprintf("--before=%d", t.Unix()), RefState, "--"); err != nil {
		return "", fmt.Errorf("gitstate: the state at %s: %w", t.Format(time.RFC3339), err)
	}
	h := strings.TrimSpace(out.String())
	if h == "" {
		return "", fmt.Errorf("gitstate: no state commit at or before %s: %w", t.Format(time.RFC3339), ErrNotFound)
	}
	return h, nil
}

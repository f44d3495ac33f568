package gitstate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// TrailerFolded is on a fold of a day's reads (FoldReads): how many read
// commits its reads.jsonl holds.
const TrailerFolded = "Codex-Folded"

// TrailerFoldedUntil is on a fold of a day's reads: the time of the
// newest read its reads.jsonl holds (RFC 3339). A fold is committed when
// retention runs, days after its reads; a walk of the events queues it at
// this time instead of its own, so it is read only once the walk gets
// there (EventsOf).
const TrailerFoldedUntil = "Codex-Folded-Until"

// FoldedReadsFile is the file of a folded day: one JSON line per read.
const FoldedReadsFile = "reads.jsonl"

// FoldedRead is one line of a folded day's reads.jsonl: a read commit's
// id, author, time and message (its summary and trailers, the call's audit
// record), which is all it held beyond the state tree it named
// (Codex-Read-At).
type FoldedRead struct {
	Commit  string    `json:"commit"`
	Author  string    `json:"author"`
	Time    time.Time `json:"time"`
	Message string    `json:"message"`
}

// FoldReads folds each of this machine's reads refs of a day that ended
// before cutoff (refs/codex/reads/<machine>/<yyyy-mm-dd>; never today's,
// which calls still extend): the day's chain of read commits, one per
// call, becomes one parentless commit whose tree holds reads.jsonl, a
// line per read, oldest first. Nothing of the audit is lost (who called
// what, when, with which result, against which state commit); what goes is
// the commit per call, so the objects git keeps for a day shrink to one
// compressed file. A day already folded is left as it is. It returns the
// refs it folded.
//
// Old days are no longer written, so the fold does not take the writer
// lock; the ref moves only from the chain it read (compare and swap), so a
// call that extended it meanwhile (a machine whose clock went back) keeps
// its chain unfolded.
//
// It sets gc.cruftPacks=true in the repository's config first, unless a
// git config sets it already (preferCruftPacks; a config it cannot write
// does not stop the fold): what a fold leaves unreachable then goes into
// one cruft pack at the next gc.
func (s *Store) FoldReads(ctx context.Context, cutoff, now time.Time) ([]string, error) {
	machine, refs, err := s.oldReadsDays(cutoff, now)
	if err != nil {
		return nil, err
	}
	if len(refs) > 0 {
		// what a fold leaves unreachable goes to a cruft pack, not
		// thousands of loose files (cruft.go). Best effort: a config
		// git cannot write (locked by another git config, read-only)
		// costs a slower gc, not the fold; the next fold asks again.
		_ = s.preferCruftPacks(ctx)
	}
	var folded []string
	for _, ref := range refs {
		ok, err := s.foldDay(ctx, ref, machine, now)
		if err != nil {
			return folded, fmt.Errorf("gitstate: fold %s: %w", ref, err)
		}
		if ok {
			folded = append(folded, ref)
		}
	}
	return folded, nil
}

// oldReadsDays are this machine's reads refs of days that ended before
// cutoff, today's never (FoldReads folds them), and the machine's id.
func (s *Store) oldReadsDays(cutoff, now time.Time) (string, []string, error) {
	machine, err := s.Machine()
	if errors.Is(err, fs.ErrNotExist) || (err == nil && machine == "") {
		return "", nil, nil // no read was ever committed here
	}
	if err != nil {
		return "", nil, err
	}
	prefix := ReadsPrefix + machine + "/"
	refs, err := gitrepo.ListRefs(s.commonDir, prefix)
	if err != nil {
		return "", nil, err
	}
	today := now.UTC().Format(time.DateOnly)
	var out []string
	for _, ref := range refs {
		day, err := time.Parse(time.DateOnly, strings.TrimPrefix(ref, prefix))
		if err != nil || day.Format(time.DateOnly) >= today || day.AddDate(0, 0, 1).After(cutoff) {
			continue
		}
		out = append(out, ref)
	}
	return machine, out, nil
}

// ReadsToFold lists the reads refs FoldReads(cutoff, now) would fold:
// this machine's of days that ended before cutoff and are not folded yet.
// A watcher asks before it runs archive for its reads alone: every
// machine folds its own, whoever archived the records last.
func (s *Store) ReadsToFold(ctx context.Context, cutoff, now time.Time) ([]string, error) {
	_, refs, err := s.oldReadsDays(cutoff, now)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ref := range refs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tip, ok, err := gitrepo.ReadRef(s.commonDir, ref)
		if err != nil || !ok {
			continue
		}
		c, err := s.readCommit(tip)
		if err != nil {
			return nil, err
		}
		if !strings.Contains(c.Message, "\n"+TrailerFolded+": ") {
			out = append(out, ref)
		}
	}
	return out, nil
}

// foldDay folds one day's chain; false if it was folded already.
func (s *Store) foldDay(ctx context.Context, ref, machine string, now time.Time) (bool, error) {
	tip, ok, err := gitrepo.ReadRef(s.commonDir, ref)
	if err != nil || !ok {
		return false, err
	}
	head, err := s.readCommit(tip)
	if err != nil {
		return false, err
	}
	if strings.Contains(head.Message, "\n"+TrailerFolded+": ") {
		return false, s.markFoldedUntil(ctx, ref, head)
	}
	var lines []FoldedRead
	var clock Clock
	var newest time.Time
	readAt := ""
	for h := tip; !h.IsZero(); {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		c, err := s.readCommit(h)
		if err != nil {
			return false, err
		}
		if clock == 0 {
			clock, readAt = clockOf(c.Message), trailerIn(c.Message, TrailerReadAt)
		}
		lines = append(lines, FoldedRead{Commit: h.String(), Author: c.Author.Name + " <" + c.Author.Email + ">", Time: c.Author.When, Message: c.Message})
		if c.Author.When.After(newest) {
			newest = c.Author.When
		}
		h = plumbing.ZeroHash
		if len(c.ParentHashes) > 0 {
			h = c.ParentHashes[0]
		}
	}
	var data []byte
	for i := len(lines) - 1; i >= 0; i-- {
		b, err := json.Marshal(lines[i])
		if err != nil {
			return false, err
		}
		data = append(append(data, b...), '\n')
	}
	var objs gitrepo.Batch
	blob := objs.Add(plumbing.BlobObject, data)
	tree, err := objs.Encode(plumbing.TreeObject, &gitrepo.Tree{Entries: []gitrepo.TreeEntry{{Name: FoldedReadsFile, Mode: filemode.Regular, Hash: blob}}})
	if err != nil {
		return false, err
	}
	day := ref[strings.LastIndex(ref, "/")+1:]
	meta := Meta{Summary: fmt.Sprintf("reads of %s on machine %s, folded: %d calls in %s", day, machine, len(lines), FoldedReadsFile),
		Trailers: []Trailer{{Key: TrailerTool, Value: "archive"}, {Key: TrailerFolded, Value: strconv.Itoa(len(lines))}, {Key: TrailerReadAt, Value: readAt},
			{Key: TrailerFoldedUntil, Value: newest.UTC().Format(time.RFC3339Nano)}}}
	sig := gitrepo.Signature{Name: s.opts.Committer.Name, Email: s.opts.Committer.Email, When: now}
	h, err := objs.Encode(plumbing.CommitObject, &gitrepo.Commit{Author: sig, Committer: sig, Message: meta.message(clock), TreeHash: tree})
	if err != nil {
		return false, err
	}
	if err := s.writeObjects(&objs); err != nil {
		return false, err
	}
	if err := s.git(ctx, nil, "update-ref", "-m", "git codex archive: fold reads", ref, h.String(), tip.String()); err != nil {
		return false, err
	}
	return true, nil
}

// markFoldedUntil gives a fold written before folds said when their
// newest read was made (TrailerFoldedUntil) that trailer: the same fold
// (tree, author, committer, message) with it added, so that walks of the
// events read the fold only once they reach its reads (EventsOf), as they
// do a fold written now. Old days are never written again: the ref moves
// only from the fold read.
func (s *Store) markFoldedUntil(ctx context.Context, ref string, fold *gitrepo.Commit) error {
	if trailerIn(fold.Message, TrailerFoldedUntil) != "" {
		return nil
	}
	reads, ok, err := s.unfold(fold)
	if err != nil || !ok || len(reads) == 0 {
		return err // not a fold this version reads: left as it is
	}
	var newest time.Time
	for _, r := range reads {
		if r.Committer.When.After(newest) {
			newest = r.Committer.When
		}
	}
	marked := *fold
	marked.Hash = plumbing.ZeroHash
	marked.Message = withTrailers(fold.Message, []Trailer{{Key: TrailerFoldedUntil, Value: newest.UTC().Format(time.RFC3339Nano)}})
	var objs gitrepo.Batch
	h, err := objs.Encode(plumbing.CommitObject, &marked)
	if err != nil {
		return err
	}
	if err := s.writeObjects(&objs); err != nil {
		return err
	}
	return s.git(ctx, nil, "update-ref", "-m", "git codex archive: say when the fold's newest read was", ref, h.String(), fold.Hash.String())
}

// trailerIn returns the value of the first line "key: value" in a commit
// message, or "". It allocates nothing: the walk of history asks it of
// two commits at every comparison of its queue that a second and a clock
// do not decide (reads of one state in one second), ~1,000 times a status.
func trailerIn(msg, key string) string {
	for len(msg) > 0 {
		line := msg
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			line, msg = msg[:i], msg[i+1:]
		} else {
			msg = ""
		}
		if strings.HasPrefix(line, key) && strings.HasPrefix(line[len(key):], ": ") {
			return line[len(key)+2:]
		}
	}
	return ""
}

// unfold reads the day's reads back out of a fold (FoldReads): one commit
// per line of its reads.jsonl, as the read commit was (its id, author,
// time and message; its parent the read before it), oldest first. The
// commits are not in the object store any more; the log shows them from
// here. ok is false for any commit that is not a fold. Lines that are not
// a read (a commit id, a message) are left out: a fold may come from
// another machine's reads refs.
func (s *Store) unfold(c *gitrepo.Commit) (reads []*gitrepo.Commit, ok bool, err error) {
	data, ok, err := s.foldedReads(c)
	if !ok || err != nil {
		return nil, ok, err
	}
	return parseFold(data), true, nil
}

// foldedReads is the reads.jsonl of a fold; ok is false for any commit
// that is not one.
func (s *Store) foldedReads(c *gitrepo.Commit) (data []byte, ok bool, err error) {
	if len(c.ParentHashes) != 0 || trailerIn(c.Message, TrailerFolded) == "" {
		return nil, false, nil
	}
	tree, err := s.readTree(c.TreeHash)
	if err != nil {
		return nil, false, err
	}
	var blob plumbing.Hash
	for _, e := range tree.Entries {
		if e.Name == FoldedReadsFile && e.Mode != filemode.Dir {
			blob = e.Hash
		}
	}
	if blob.IsZero() {
		return nil, false, nil
	}
	data, err = s.readBlob(blob)
	if err != nil {
		return nil, false, err
	}
	return data, true, nil
}

// parseFold reads a fold's reads.jsonl back as commits (unfold).
func parseFold(data []byte) (reads []*gitrepo.Commit) {
	var prev plumbing.Hash
	for _, line := range strings.Split(string(data), "\n") {
		var r FoldedRead
		if line == "" || json.Unmarshal([]byte(line), &r) != nil || !plumbing.IsHash(r.Commit) || r.Message == "" {
			continue
		}
		name, email, _ := strings.Cut(strings.TrimSuffix(r.Author, ">"), " <")
		sig := gitrepo.Signature{Name: name, Email: email, When: r.Time}
		rc := &gitrepo.Commit{Hash: plumbing.NewHash(r.Commit), Author: sig, Committer: sig, Message: r.Message}
		if !prev.IsZero() {
			rc.ParentHashes = []plumbing.Hash{prev}
		}
		prev = rc.Hash
		reads = append(reads, rc)
	}
	return reads
}

// mayHoldRead says whether a fold's reads.jsonl can hold the read whose
// commit id begins with rev (lower-case hex): FoldReads writes each line
// with json.Marshal, so such a read's line holds `"commit":"<rev`. Looking
// for the bytes spares parsing the day's ~20k lines of every fold that
// does not hold it; a file written some other way is parsed whole.
func mayHoldRead(data []byte, rev string) bool {
	const key = `"commit":"`
	return bytes.Contains(data, []byte(key+rev)) || !bytes.Contains(data, []byte(key))
}

// foldedRead finds the read whose commit id is rev, or begins with it (4
// hex digits at least, and one read only), among the folds that the reads
// refs hold (this machine's and those sync --reads fetched): once a day is
// folded its reads' own commits are on no ref, and after git's next prune
// the fold is where they are (Event, Changes). ok is false when no fold
// holds it.
func (s *Store) foldedRead(ctx context.Context, rev string) (read *gitrepo.Commit, fold plumbing.Hash, ok bool, err error) {
	rev = strings.ToLower(rev)
	if len(rev) < 4 || len(rev) > 40 || strings.Trim(rev, "0123456789abcdef") != "" {
		return nil, plumbing.ZeroHash, false, nil
	}
	refs, err := s.ReadsRefs()
	if err != nil {
		return nil, plumbing.ZeroHash, false, err
	}
	for _, ref := range refs {
		if err := ctx.Err(); err != nil {
			return nil, plumbing.ZeroHash, false, err
		}
		h, found, err := gitrepo.ReadRef(s.commonDir, ref)
		if err != nil || !found {
			continue // a ref that moved away meanwhile
		}
		c, err := s.readCommit(h)
		if err != nil {
			continue // a day whose fold is gone holds nothing to find
		}
		data, isFold, err := s.foldedReads(c)
		if err != nil {
			return nil, plumbing.ZeroHash, false, err
		}
		if !isFold || !mayHoldRead(data, rev) {
			continue
		}
		for _, r := range parseFold(data) {
			if !strings.HasPrefix(r.Hash.String(), rev) {
				continue
			}
			if read != nil && read.Hash != r.Hash {
				return nil, plumbing.ZeroHash, false, nil // ambiguous: git would say so too
			}
			read, fold = r, c.Hash
		}
	}
	return read, fold, read != nil, nil
}

package gitstate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Getting an archived record back (retention, docs/STATE.md): `git codex
// archive restore <path or id>` writes the version a record archive holds
// back at its path on the tip, in the call's own transaction, with a
// trailer naming the archive. Only an archive that checks out (the checks
// a merge applies before it lets an archive's deletion stand:
// archivedIndex.check) and whose state commit is in the history of the
// tip is read, so what comes back is a version the state really had, not
// whatever someone pushed under refs/codex/archive/.

// TrailerRestoredFrom is on the commit that put archived records back on
// the tip: "<archive ref> (<archive commit>)".
const TrailerRestoredFrom = "Codex-Restored-From"

// ErrNotArchived means no record archive this repository holds (and
// believes) has the record asked for (NotArchivedError says more).
var ErrNotArchived = errors.New("no record archive holds it")

// ErrRecordLive means the record asked for is on the tip already: there is
// nothing to restore, and restoring would overwrite what is live
// (RecordLiveError says more).
var ErrRecordLive = errors.New("the record is live")

// NotArchivedError is ErrNotArchived for one record: Refused says, for
// each archive that holds it, why it was not believed (none: no archive
// holds it).
type NotArchivedError struct {
	Record  string
	Refused []string
}

func (e *NotArchivedError) Error() string {
	if len(e.Refused) == 0 {
		return "no record archive holds " + e.Record
	}
	return fmt.Sprintf("no record archive that checks out holds %s: %s", e.Record, strings.Join(e.Refused, "; "))
}

func (e *NotArchivedError) Unwrap() error { return ErrNotArchived }

// RecordLiveError is ErrRecordLive: Paths are on the tip, and Archive is
// the archive that holds them.
type RecordLiveError struct {
	Paths   []string
	Archive string
}

func (e *RecordLiveError) Error() string {
	return fmt.Sprintf("%s is on %s already (%s holds an archived version)", strings.Join(e.Paths, ", "), RefState, e.Archive)
}

func (e *RecordLiveError) Unwrap() error { return ErrRecordLive }

// RestoredRecords says what RestoreArchived put back and where from.
type RestoredRecords struct {
	// Paths are the records written back, in path order.
	Paths []string
	// Archive is the archive's ref and Commit its commit; StateTip the
	// state commit its records were taken from; ArchivedAt when.
	Archive, Commit, StateTip string
	ArchivedAt                time.Time
}

// RestoreArchived writes back on the tip the records that the newest
// record archive holding key has: key is a record's path in the state
// (mail/alice/x/y/m-….json; ".json" may be left out), or an id, which
// takes every record of that archive named <id>.json (an instance's agent
// record and its wake record, archived together, come back together). It
// fails with ErrRecordLive (naming the paths) when any of them is on the
// tip, and with ErrNotArchived when no archive that checks out holds key
// (saying why each archive that holds it was not believed). The commit
// carries TrailerRestoredFrom. layout is the state's (the record kinds'):
// an archive holding a record of a directory it gives no Retention does
// not check out.
func (tx *Tx) RestoreArchived(ctx context.Context, key string, layout *Layout) (RestoredRecords, error) {
	key = strings.Trim(strings.TrimSpace(key), "/")
	if key == "" || strings.ContainsAny(key, "\x00\n") {
		return RestoredRecords{}, fmt.Errorf("gitstate: restore %q: %w", key, ErrInvalidPath)
	}
	var parts []string
	if strings.Contains(key, "/") {
		if !strings.HasSuffix(key, ".json") {
			key += ".json"
		}
		var err error
		if parts, err = splitPath(key); err != nil {
			return RestoredRecords{}, err
		}
	}
	a := tx.base.s.archivedIndex(ctx, layout)
	if err := a.load(); err != nil {
		return RestoredRecords{}, err
	}
	var cands []restoreFind
	var refused []string
	for _, ar := range a.archives {
		if err := ctx.Err(); err != nil {
			return RestoredRecords{}, err
		}
		var f restoreFind
		if parts != nil {
			blob, err := a.lookup(ar.tree, parts)
			if err != nil {
				return RestoredRecords{}, err
			}
			if !blob.IsZero() {
				f.paths, f.blobs = []string{key}, []plumbing.Hash{blob}
			}
		} else if err := a.named(ar.tree, nil, key+".json", &f.paths, &f.blobs); err != nil {
			return RestoredRecords{}, err
		}
		if len(f.paths) == 0 {
			continue
		}
		if err := a.check(ar); err != nil {
			return RestoredRecords{}, err
		}
		why := ar.bad
		if why == "" {
			in, err := a.inHistory(ar.tip, tx.base.commit)
			if err != nil {
				return RestoredRecords{}, err
			}
			if !in {
				why = fmt.Sprintf("its state commit %s is not in the history of %s", ar.tip, RefState)
			}
		}
		if why != "" {
			refused = append(refused, ar.ref+": "+why)
			continue
		}
		c, err := a.s.readCommit(ar.commit)
		if err != nil {
			return RestoredRecords{}, err
		}
		f.ar, f.at = ar, c.Committer.When
		cands = append(cands, f)
	}
	if len(cands) == 0 {
		return RestoredRecords{}, &NotArchivedError{Record: key, Refused: refused}
	}
	// the newest archive holds the version the tip had last (a record
	// restored and archived again is in two): newest by history first
	// (its state commit descends from the other's), since two archives
	// made in one second tie on their commit times
	f := cands[0]
	for _, c := range cands[1:] {
		newer, err := a.newerArchive(c, f)
		if err != nil {
			return RestoredRecords{}, err
		}
		if newer {
			f = c
		}
	}
	var live []string
	for _, p := range f.paths {
		if _, err := tx.Read(p); err == nil {
			live = append(live, p)
		} else if !errors.Is(err, ErrNotFound) {
			return RestoredRecords{}, err
		}
	}
	if len(live) > 0 {
		return RestoredRecords{}, &RecordLiveError{Paths: live, Archive: f.ar.ref}
	}
	for i, p := range f.paths {
		data, err := a.s.readBlob(f.blobs[i])
		if err != nil {
			return RestoredRecords{}, err
		}
		if err := tx.PutRaw(p, data); err != nil {
			return RestoredRecords{}, err
		}
	}
	out := RestoredRecords{Paths: f.paths, Archive: f.ar.ref, Commit: f.ar.commit.String(), StateTip: f.ar.tip.String(), ArchivedAt: f.at}
	sort.Strings(out.Paths)
	tx.trailers = append(tx.trailers, Trailer{Key: TrailerRestoredFrom, Value: fmt.Sprintf("%s (%s)", out.Archive, out.Commit)})
	return out, nil
}

// named appends the path and blob of every file called name below the
// tree t (at prefix), the archive's root files (its manifest) aside.
func (a *archivedIndex) named(t plumbing.Hash, prefix []string, name string, paths *[]string, blobs *[]plumbing.Hash) error {
	entries, err := a.entries(t)
	if err != nil {
		return err
	}
	for n, e := range entries {
		switch {
		case e.Mode == filemode.Dir:
			if err := a.named(e.Hash, append(prefix[:len(prefix):len(prefix)], n), name, paths, blobs); err != nil {
				return err
			}
		case n == name && len(prefix) > 0:
			*paths = append(*paths, strings.Join(append(prefix[:len(prefix):len(prefix)], n), "/"))
			*blobs = append(*blobs, e.Hash)
		}
	}
	return nil
}

// restoreFind is an archive that holds the record to restore: where, when
// it was taken, and the record's paths and blobs in it.
type restoreFind struct {
	ar    *recordArchive
	at    time.Time
	paths []string
	blobs []plumbing.Hash
}

// newerArchive reports whether archive x was taken after y: x's state
// commit descends from y's, or, where neither holds the other, x was
// committed later, or, in the same second, its ref (named by a
// time-ordered id) sorts after y's.
func (a *archivedIndex) newerArchive(x, y restoreFind) (bool, error) {
	if x.ar.tip != y.ar.tip {
		if in, err := a.inHistory(y.ar.tip, x.ar.tip); err != nil || in {
			return in, err
		}
		if in, err := a.inHistory(x.ar.tip, y.ar.tip); err != nil || in {
			return false, err
		}
	}
	if !x.at.Equal(y.at) {
		return x.at.After(y.at), nil
	}
	return x.ar.ref > y.ar.ref, nil
}

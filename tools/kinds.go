package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/gitcodex/git-codex/gitstate"
)

// Kind is the one definition of a record kind: where its records live, how
// a record that arrives from another machine is checked, and how sync
// treats it (whether a peer may delete it, whether it has one holder).
// Every kind git codex stores is listed in the assembly's Catalog; adding
// a kind is one entry there, defined next to its record type in the file
// of its noun (git-bug's dag.Definition is the model). The record's Go type, path
// helper and tools live in the same file.
type Kind struct {
	// Name names the kind in conflicts, errors and docs: "mail", "task".
	Name string
	// Dir is the directory of its records in the state tree.
	Dir string
	// Depth is the number of path elements below Dir, the file included:
	// 1 for <id>.json, 3 for <x>/<y>/<id>.json.
	Depth int
	// Fanout is how many of the levels just above the file are fan-out
	// buckets named by one character of the id (gitstate.Fanout): 2 for
	// <x>/<y>/<id>.json. Sync refuses any other name there.
	Fanout int
	// Kept says no tool ever deletes its records (mail, decisions,
	// conflicts...): sync must not let a peer remove one.
	Kept bool
	// Claim is set for kinds whose records have at most one holder (locks,
	// tasks, a coder's active review): the invariant sync restores.
	Claim *ClaimRule
	// Retention, for the kinds retention archives, is the name `archive`
	// takes them under: its kinds input, its retention.<name>.days
	// setting, and the count in a record archive's manifest ("mail",
	// "instances" for an instance's agent and wake records). It is the one
	// list of what a record archive may hold: gitstate reads it from the
	// layout (DirLayout.Retention) to check an archive, so a kind added
	// here is one sync and archive_restore believe. "": never archived.
	Retention string
	// Archived, for the kinds retention archives, tells whether
	// `archive` could have taken this version of a record, whatever its
	// age (a read mail, an ended instance): a merge lets a peer's deletion
	// of a Kept record stand only if an archive holds a version that
	// passes, so a forged archive cannot take an unread mail or a live
	// instance off our tip (gitstate.Layout.Archivable). nil: never.
	Archived func(data []byte) bool
	// check decodes a record and checks that it belongs at its path: rel
	// is the path below Dir, split at "/", and name the file name without
	// ".json"; kinds is every kind of the state, for a record that names
	// another (a conflict names a record with a holder).
	check func(kinds KindTable, rel []string, name string, data []byte) error
}

// The retention names of the framework's kinds (Kind.Retention).
const (
	// RetainInstances takes an ended instance's agent record, and its wake
	// record with it.
	RetainInstances = "instances"
	// RetainConflicts takes settled conflict records.
	RetainConflicts = "conflicts"
)

// KindTable is every record kind a state holds, the framework's and the
// nouns' (Registry.Kinds): the table that validates, merges and lays out
// the records sync brings in.
type KindTable []Kind

// ClaimRule is how sync keeps one holder for a kind's records. Each record
// is the one place its resource's claim lives, so two machines that grant
// the same resource collide on one path and the merge sees both claims.
type ClaimRule struct {
	// Resource is the record's field that names the resource.
	Resource string
	// Coupled are the fields that belong to the claim: they follow
	// whichever side's claim a merge keeps (a task's state, a lock's
	// reason and expiry), so a merge never pairs one holder's claim with
	// another's state.
	Coupled []string
	// EndField and EndValues say when a record's resource has ended for
	// good (a task COMPLETED or CANCELLED): a side that ended it wins.
	EndField  string
	EndValues []string
	// EveryClaimGrants reports records in which each claim is a grant of
	// its own (a cycle's phase): two new claims from one base conflict
	// even for the same holder (claimConflict).
	EveryClaimGrants func(record []byte) bool
}

// RecordKind defines a kind whose records decode strictly as T, then pass
// check (nil: any T at the right depth).
func RecordKind[T any](k Kind, check func(rel []string, name string, v *T) error) Kind {
	if check == nil {
		return recordKindIn[T](k, nil)
	}
	return recordKindIn(k, func(_ KindTable, rel []string, name string, v *T) error { return check(rel, name, v) })
}

// recordKindIn is recordKind for a kind whose check needs the other kinds
// (a conflict must name a record with a holder).
func recordKindIn[T any](k Kind, check func(kinds KindTable, rel []string, name string, v *T) error) Kind {
	k.check = func(kinds KindTable, rel []string, name string, data []byte) error {
		var v T
		if err := strictDecode(data, &v); err != nil {
			return err
		}
		if check == nil {
			return nil
		}
		return check(kinds, rel, name, &v)
	}
	return k
}

// KindOf finds the kind whose directory holds path, and the path's
// elements below that directory. A path below a kind's directory belongs to
// that kind whether or not it has the kind's layout (ValidateRecord tells).
func (t KindTable) KindOf(path string) (Kind, []string, bool) {
	for _, k := range t {
		if rest, ok := strings.CutPrefix(path, k.Dir+"/"); ok {
			return k, strings.Split(rest, "/"), true
		}
	}
	return Kind{}, nil, false
}

// ClaimKindOf finds the kind of the record at path if the kind has a
// holder and the path has its layout (the same that ValidateRecord checks).
func (t KindTable) ClaimKindOf(path string) (Kind, bool) {
	k, rel, ok := t.KindOf(path)
	if !ok || k.Claim == nil || !k.fits(rel) {
		return Kind{}, false
	}
	return k, true
}

// fits reports whether rel has the kind's layout: Depth elements, the last
// a ".json" file.
func (k Kind) fits(rel []string) bool {
	return len(rel) == k.Depth && strings.HasSuffix(rel[len(rel)-1], ".json") && len(rel[len(rel)-1]) > len(".json")
}

// ValidateRecord checks a record that sync would bring in from another
// machine (a gitstate.Validator): it must decode as its kind, and the ids
// inside must match its path, so the tools can read it afterwards and no
// record can claim to be another. Paths outside every kind's directory (a
// newer version's records) only have to be JSON.
func (t KindTable) ValidateRecord(path string, data []byte) error {
	k, rel, ok := t.KindOf(path)
	if !ok {
		if !json.Valid(data) {
			return fmt.Errorf("not JSON")
		}
		return nil
	}
	if !k.fits(rel) {
		return fmt.Errorf("no %s record belongs at this path", k.Name)
	}
	return k.check(t, rel, strings.TrimSuffix(rel[len(rel)-1], ".json"), data)
}

// strictDecode decodes one JSON value with nothing after it: the record
// must be one json.Unmarshal (which the tools use) accepts too.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("trailing data")
	}
	return nil
}

// FannedOut reports whether the two directories above an id's file are
// its fan-out (gitstate.Fanout).
func FannedOut(rel []string, id string) bool {
	n := len(rel)
	return n >= 3 && rel[n-3]+"/"+rel[n-2] == gitstate.Fanout(id)
}

// ValidClaim checks that a claim names a possible holder: an agent id or a
// person's, since a conflict mails the holder at a path made from it.
func ValidClaim(c *Claim) error {
	if c == nil {
		return nil
	}
	if err := ValidateCallerID(c.Holder); err != nil {
		return fmt.Errorf("claim holder %q: %w", c.Holder, err)
	}
	return nil
}

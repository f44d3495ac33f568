package work

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/mail"
)

// restoreInvariants runs inside a sync's merge commit, after MergeRecord has
// settled every exclusive record both sides changed: for each claim that
// lost (to an earlier claim, or to the other side ending the resource) it
// writes a Conflict record and a mail to the loser (see recordConflict for
// how both stay the same on every machine).
func restoreInvariants(kinds tools.KindTable, tx *gitstate.Tx, report gitstate.MergeReport) ([]tools.Conflict, error) {
	var out []tools.Conflict
	for _, path := range report.Resolved {
		kind, ok := kinds.ClaimKindOf(path)
		if !ok {
			continue
		}
		sides := report.Sides[path]
		rule := tools.RuleEnded
		winner, loser, ok := tools.EndedSide(kind, sides.Base, sides.Ours, sides.Theirs)
		if ok {
			// a conflict only if the losing side claimed it meanwhile
			lc := tools.ClaimOf(loser)
			ok = lc != nil && !lc.Same(tools.ClaimOf(sides.Base)) && !lc.Same(tools.ClaimOf(winner))
		} else {
			rule = tools.RuleEarlierClaim
			winner, loser, ok = tools.ClaimConflict(kind, sides.Base, sides.Ours, sides.Theirs)
		}
		if !ok {
			continue
		}
		c, err := recordConflict(tx, kind, rule, path, winner, loser)
		if err != nil {
			return nil, err
		}
		if c != nil {
			out = append(out, *c)
		}
	}
	return out, nil
}

// recordConflict writes the conflict over the record at path and, unless
// the loser's id cannot have an inbox, the mail that tells the loser. The
// mail is derived from the two claims alone, so two merges of the same
// claims write it once; the conflict record also from the loser's version
// of the record (which may differ between two such merges), so neither
// version is lost. Times are the later claim's: a merge has no wall clock
// that both machines share, so the mail sorts by the claim, not the sync.
func recordConflict(tx *gitstate.Tx, kind tools.Kind, rule, path string, winner, loser []byte) (*tools.Conflict, error) {
	w, l := tools.ClaimOf(winner), *tools.ClaimOf(loser)
	when, clock := l.At, l.Clock
	if w != nil {
		when, clock = later(w.At, l.At), max(w.Clock, l.Clock)
	}
	wj, _ := json.Marshal(w)
	lj, _ := json.Marshal(l)
	lost := sha256.Sum256(loser)
	id := gitstate.DeriveID("c", when, path, rule, string(wj), string(lj), hex.EncodeToString(lost[:]))
	if _, err := tx.Read(tools.ConflictPath(id)); err == nil {
		return nil, nil // already recorded (it came in with one side)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(loser, &fields); err != nil {
		return nil, fmt.Errorf("conflict over %s: %w", path, err)
	}
	var resource string
	json.Unmarshal(fields[kind.Claim.Resource], &resource)

	c := tools.Conflict{
		ID: id, Kind: kind.Name, Resource: resource, Record: path, Rule: rule, Winner: w, Loser: l,
		LostVersion: json.RawMessage(loser), CreatedAt: when, Clock: clock,
	}
	if tools.ValidateCallerID(l.Holder) == nil {
		to := tools.InboxFor(l.Holder)
		m := mail.Mail{
			ID: gitstate.DeriveID("m", when, path, rule, string(wj), string(lj)), From: tools.SystemSender, FromType: tools.TypeSystem, To: to,
			CreatedAt: when, Clock: clock,
		}
		m.Subject, m.Body = conflictText(kind, rule, resource, w, l, winner)
		c.MailID = m.ID
		if _, err := tx.Read(mail.Path(to, m.ID)); err != nil { // not yet told (a read flag stays as it is)
			if err := tx.Put(mail.Path(to, m.ID), m); err != nil {
				return nil, err
			}
		}
	}
	return &c, tx.Put(tools.ConflictPath(id), c)
}

// conflictText is the subject and body of the mail that tells a loser.
func conflictText(kind tools.Kind, rule, resource string, w *tools.Claim, l tools.Claim, winner []byte) (subject, body string) {
	mine := fmt.Sprintf("%s %s was granted to you (%s, clock %d)", kind.Name, resource, l.At.Format(time.RFC3339), l.Clock)
	keep := fmt.Sprintf("Your version of the record is kept: `git codex conflict list --loser %s --json`.", l.Holder)
	if rule == tools.RuleEnded {
		var v struct {
			State     string `json:"state"`
			UpdatedBy string `json:"updated_by"`
		}
		json.Unmarshal(winner, &v)
		return fmt.Sprintf("Your %s %s was %s on another machine", kind.Name, resource, v.State),
			fmt.Sprintf("While two machines were apart, %s, and on the other machine %s set it %s.\n"+
				"Sync keeps it %s, so your claim is gone.\n%s", mine, v.UpdatedBy, v.State, v.State, keep)
	}
	return fmt.Sprintf("You lost %s %s to %s in a sync", kind.Name, resource, w.Holder),
		fmt.Sprintf("While two machines were apart, %s and to %s (%s, clock %d).\n"+
			"Sync keeps the earlier claim, so %s holds it now and your claim is gone.\n%s",
			mine, w.Holder, w.At.Format(time.RFC3339), w.Clock, w.Holder, keep)
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

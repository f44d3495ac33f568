package tools

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
)

const DirConflicts = "conflicts"

// conflictIDPattern is the shape of ids gitstate.DeriveID("c", ...) makes.
var conflictIDPattern = LazyRegexp(`^c-[0-9a-z]{16}$`)

func ConflictPath(id string) string {
	return DirConflicts + "/" + gitstate.Fanout(id) + "/" + id + ".json"
}

// ConflictKind is the conflicts/<x>/<y>/<id>.json records. A conflict is never deleted.
// The framework defines it with the claims whose invariant it records;
// settling them (which mails the loser) is the nouns' (Hooks.SettleClaims).
func ConflictKind() Kind {
	k := recordKindIn(Kind{Name: "conflict", Dir: DirConflicts, Depth: 3, Fanout: 2, Kept: true}, func(kinds KindTable, rel []string, name string, c *Conflict) error {
		if c.ID != name || !conflictIDPattern.MatchString(c.ID) || !FannedOut(rel, c.ID) {
			return fmt.Errorf("conflict record %q does not belong at this path", c.ID)
		}
		if _, ok := kinds.ClaimKindOf(c.Record); !ok {
			return fmt.Errorf("conflict record %q is about %q, not a record with a holder", c.ID, c.Record)
		}
		if ValidateCallerID(c.Loser.Holder) != nil || ValidClaim(c.Winner) != nil {
			return fmt.Errorf("conflict record %q names a holder that cannot be one", c.ID)
		}
		return nil
	})
	k.Retention = RetainConflicts
	k.Archived = func(data []byte) bool { return json.Valid(data) } // a settled conflict is history
	return k
}

// Conflict rules: why the loser lost.
const (
	RuleEarlierClaim = "earlier-claim" // both sides granted it; the earlier claim kept it
	RuleEnded        = "ended"         // the other side completed or cancelled it meanwhile
)

// Conflict records that two machines, while they were apart, granted one
// resource to different holders, or that one granted it while the other
// ended it, and how sync settled it. Immutable. The loser's version of the
// record is kept whole, so nothing it recorded is lost; the loser is also
// mailed.
type Conflict struct {
	ID          string          `json:"id"`
	Kind        string          `json:"kind" jsonschema:"lock, task or review"`
	Resource    string          `json:"resource" jsonschema:"the lock's name, the task's id or the coder's id"`
	Record      string          `json:"record" jsonschema:"path of the record in the state tree"`
	Rule        string          `json:"rule" jsonschema:"earlier-claim: both sides granted it and the earlier claim kept it; ended: the other side completed or cancelled it"`
	Winner      *Claim          `json:"winner" jsonschema:"the claim that was kept; null if the resource ended unclaimed"`
	Loser       Claim           `json:"loser"`
	LostVersion json.RawMessage `json:"lost_version" jsonschema:"the loser's version of the record, as it was before the merge"`
	MailID      string          `json:"mail_id" jsonschema:"the mail that told the loser"`
	CreatedAt   time.Time       `json:"created_at"`
	Clock       gitstate.Clock  `json:"clock"`
}

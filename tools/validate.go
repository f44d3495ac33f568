package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/gitcodex/git-codex/gitstate"
)

// ValidateRecord checks a record that sync would bring in from another
// machine (a gitstate.Validator): it must decode as its kind, and the ids
// inside must match its path, so the tools can read it afterwards and no
// record can claim to be another. Paths this version does not know (a newer
// version's records) only have to be JSON.
func ValidateRecord(path string, data []byte) error {
	parts := strings.Split(path, "/")
	name := strings.TrimSuffix(parts[len(parts)-1], ".json")
	switch {
	case !knownLayout(parts):
		return fmt.Errorf("no record of git codex belongs at this path")
	case path == pathConfig:
		var c Config
		return strictDecode(data, &c)
	case parts[0] == dirAgents && len(parts) == 2:
		var a Agent
		if err := strictDecode(data, &a); err != nil {
			return err
		}
		if a.ID != name || ValidateAgentID(a.ID) != nil {
			return fmt.Errorf("agent record names %q", a.ID)
		}
		if _, err := ParseAgentType(string(a.Type)); err != nil || a.Type == TypeHuman {
			return fmt.Errorf("agent type %q", a.Type)
		}
	case parts[0] == dirMail && len(parts) == 5:
		var m Mail
		if err := strictDecode(data, &m); err != nil {
			return err
		}
		if m.ID != name || !mailIDPattern.MatchString(m.ID) || m.To != parts[1] || parts[2]+"/"+parts[3] != gitstate.Fanout(m.ID) {
			return fmt.Errorf("mail record %q to %q does not belong at this path", m.ID, m.To)
		}
	case parts[0] == dirDecisions && len(parts) == 4:
		var d Decision
		if err := strictDecode(data, &d); err != nil {
			return err
		}
		if d.ID != name || parts[1]+"/"+parts[2] != gitstate.Fanout(d.ID) {
			return fmt.Errorf("decision record %q does not belong at this path", d.ID)
		}
	case parts[0] == dirTasks && len(parts) == 4:
		var t Task
		if err := strictDecode(data, &t); err != nil {
			return err
		}
		if t.ID != name || !taskIDPattern.MatchString(t.ID) || parts[1]+"/"+parts[2] != gitstate.Fanout(t.ID) {
			return fmt.Errorf("task record %q does not belong at this path", t.ID)
		}
		if err := validTaskState("state", t.State); err != nil {
			return err
		}
		return validClaim(t.Claim)
	case parts[0] == dirLocks && len(parts) == 4:
		var l Lock
		if err := strictDecode(data, &l); err != nil {
			return err
		}
		if err := validLockName(l.Name); err != nil {
			return err
		}
		if lockPath(l.Name) != path {
			return fmt.Errorf("lock record %q does not belong at this path", l.Name)
		}
		return validClaim(l.Claim)
	case path == activeReviewPath(name) && len(parts) == 3:
		var r ActiveReview
		if err := strictDecode(data, &r); err != nil {
			return err
		}
		if r.Coder != name || ValidateAgentID(r.Coder) != nil {
			return fmt.Errorf("active review record names coder %q", r.Coder)
		}
		return validClaim(r.Claim)
	case parts[0] == dirConflicts && len(parts) == 4:
		var c Conflict
		if err := strictDecode(data, &c); err != nil {
			return err
		}
		if c.ID != name || !conflictIDPattern.MatchString(c.ID) || parts[1]+"/"+parts[2] != gitstate.Fanout(c.ID) {
			return fmt.Errorf("conflict record %q does not belong at this path", c.ID)
		}
		if _, ok := exclusiveKindOf(c.Record); !ok {
			return fmt.Errorf("conflict record %q is about %q, not a lock, task or review", c.ID, c.Record)
		}
		if ValidateCallerID(c.Loser.Holder) != nil || validClaim(c.Winner) != nil {
			return fmt.Errorf("conflict record %q names a holder that cannot be one", c.ID)
		}
	default:
		if !json.Valid(data) {
			return fmt.Errorf("not JSON")
		}
	}
	return nil
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

// knownLayout reports whether a path is one this version may hold: in the
// directories of the kinds it knows, only their own layout; anywhere else
// (a newer version's kinds), anything.
func knownLayout(parts []string) bool {
	depth := map[string]int{dirAgents: 2, dirMail: 5, dirDecisions: 4, dirTasks: 4, dirLocks: 4, dirConflicts: 4}
	if want, ok := depth[parts[0]]; ok {
		return len(parts) == want && strings.HasSuffix(parts[len(parts)-1], ".json")
	}
	if strings.HasPrefix(strings.Join(parts, "/"), dirActiveReviews+"/") {
		return len(parts) == 3 && strings.HasSuffix(parts[2], ".json")
	}
	return true
}

// validClaim checks that a claim names a possible holder: an agent id or a
// person's, since a conflict mails the holder at a path made from it.
func validClaim(c *Claim) error {
	if c == nil {
		return nil
	}
	if err := ValidateCallerID(c.Holder); err != nil {
		return fmt.Errorf("claim holder %q: %w", c.Holder, err)
	}
	return nil
}

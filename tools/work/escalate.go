package work

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/forge"
	"github.com/gitcodex/git-codex/tools/mail"
	"github.com/gitcodex/git-codex/tools/review"
)

// Escalation (seed 003): a call that fails for a reason its caller did not
// cause and cannot fix by calling differently (GitHub down or refusing,
// retries run out, an internal error) is mailed to the caller's supervisor
// (to the people when it has none). A failure of a critical tool (seed
// 003's, and those in escalation.critical) is mailed to the people with a
// subject starting CRITICAL. Repeated failures of one kind (recipient,
// tool, code) are folded: one mail per hour, and the next mail says how
// many were folded into it; the peers' users had 86 alerts in 30 minutes.

const dirEscalations = "escalations"

// foldWindow is how long failures of one kind are folded into one mail.
const foldWindow = time.Hour

// seedCritical are seed 003's critical tools, by git codex's names.
func seedCritical() []string {
	return []string{"mail_send", "agent_get_task", "agent_get_epic", "task_update_status", "epic_update_status"}
}

// escalationKeys are the settings of escalation.
func escalationKeys() []tools.ConfigKey {
	return []tools.ConfigKey{
		{Name: "escalation.critical", Kind: "list", Default: []string{}, Doc: "tools whose failures mail the people with a CRITICAL subject, besides seed 003's (mail_send, agent_get_task, agent_get_epic, task_update_status, epic_update_status)"},
	}
}

// isCritical reports a tool whose failures the people hear of, whoever
// called it.
func isCritical(cfg *tools.Config, tool string) bool {
	return slices.Contains(seedCritical(), tool) || slices.Contains(cfg.ListValue("escalation.critical"), tool)
}

// escalates reports failures that are mailed to someone.
func escalates(code tools.Code) bool {
	switch code {
	case tools.InternalError, tools.TransientError, tools.GitHubUnavailable, tools.GitHubRefused:
		return true
	}
	return false
}

var escalationKeyPattern = tools.LazyRegexp(`^[0-9a-f]{16}$`)

// escalationKind: escalations/<key>.json, one per kind of failure and
// recipient (a handful: tools x codes x supervisors).
func escalationKind() tools.Kind {
	return tools.RecordKind(tools.Kind{Name: "escalation", Dir: dirEscalations, Depth: 1, Kept: true}, func(_ []string, name string, e *Escalation) error {
		if e.Key != name || !escalationKeyPattern.MatchString(e.Key) {
			return fmt.Errorf("escalation record %q does not belong at this path", e.Key)
		}
		return nil
	})
}

// Escalation is the folding state of one kind of failure mailed to one
// recipient. Mutable: Clock is the Lamport time of its last change.
type Escalation struct {
	Key        string     `json:"key"`
	To         string     `json:"to" jsonschema:"the recipient's inbox"`
	Tool       string     `json:"tool"`
	Code       tools.Code `json:"code"`
	LastMailID string     `json:"last_mail_id"`
	LastMailAt time.Time  `json:"last_mail_at"`
	// Folded counts failures since the last mail that were not mailed.
	Folded    int            `json:"folded"`
	LastError string         `json:"last_error"`
	UpdatedAt time.Time      `json:"updated_at"`
	UpdatedBy string         `json:"updated_by"`
	Clock     gitstate.Clock `json:"clock"`
}

func escalationKey(to, tool string, code tools.Code) string {
	sum := sha256.Sum256([]byte(to + "\x00" + tool + "\x00" + string(code)))
	return hex.EncodeToString(sum[:8])
}

func escalationPath(key string) string { return dirEscalations + "/" + key + ".json" }

// escalate is an OnFailure hook (Hooks): it mails a failed call's error
// to whoever must hear of it, in one more commit after commit, the call's
// latest, and returns the latest commit. It never changes the call's
// answer; if it cannot write, the failure is still in the call's audit
// record.
func escalate(ctx context.Context, st *gitstate.Store, c *tools.Call, res tools.Result, commit string) string {
	if c == nil || res.Error == nil || !escalates(res.Error.Code) {
		return commit
	}
	if tools.IsHuman(c.Caller.ID) && c.Config != nil && !isCritical(c.Config, c.ToolName()) {
		// a person made the call and saw it fail; the call's own audit
		// record has the failure, and nobody else is mailed: no commit
		return commit
	}
	next, err := tools.Update(ctx, st, func(tx *gitstate.Tx) error {
		ec, err := tools.CallFor(tx, tools.Audit{Caller: c.Caller, Tool: c.ToolName(), Follows: commit, Env: c.Env, Keys: c.ConfigKeys()})
		if err == nil {
			err = sendEscalation(ec, c.ToolName(), res, commit)
		}
		if err != nil {
			tx.Discard()
			ec.Audit(tools.AsError(err))
			return nil
		}
		ec.Audit(nil)
		return nil
	})
	if err != nil {
		return commit
	}
	return next.Hash
}

// sendEscalation mails the failure (or folds it) for each recipient.
func sendEscalation(c *tools.Call, tool string, res tools.Result, commit string) error {
	e := res.Error
	critical := isCritical(c.Config, tool)
	var to []string
	switch {
	case critical:
		to = append(to, tools.HumanInbox)
		if c.Agent != nil && c.Agent.Supervisor != "" {
			to = append(to, c.Agent.Supervisor)
		}
	case c.Agent != nil && c.Agent.Supervisor != "":
		to = append(to, c.Agent.Supervisor)
	case c.Agent != nil:
		to = append(to, tools.HumanInbox) // nobody supervises it: the people hear
	default:
		// a person's own failure of a tool that is not critical (escalate
		// commits nothing for it when the call's config was read)
		c.Summarize("%s's failure (%s) was seen by the person who made it", tool, e.Code)
		return nil
	}
	msg := tools.RedactMessage(e.Message)
	var done []string
	for _, rcpt := range to {
		folded, err := escalateTo(c, rcpt, tool, e.Code, msg, critical, commit)
		if err != nil {
			return err
		}
		if folded {
			done = append(done, rcpt+" (folded)")
		} else {
			done = append(done, rcpt)
		}
	}
	c.Summarize("%s failed (%s): escalated to %s", tool, e.Code, strings.Join(done, ", "))
	return nil
}

// escalateTo mails one recipient, or folds the failure into the mail sent
// within the last hour for the same kind; folded reports which.
func escalateTo(c *tools.Call, to, tool string, code tools.Code, msg string, critical bool, commit string) (folded bool, err error) {
	tx := c.Tx
	now := tx.Now()
	key := escalationKey(to, tool, code)
	var esc Escalation
	err = tx.Get(escalationPath(key), &esc)
	if err != nil && !errors.Is(err, gitstate.ErrNotFound) {
		return false, err
	}
	if err == nil && now.Sub(esc.LastMailAt) < foldWindow {
		esc.Folded++
		esc.LastError, esc.UpdatedAt, esc.UpdatedBy, esc.Clock = msg, now, c.Caller.ID, tx.Clock()
		return true, tx.Put(escalationPath(key), esc)
	}
	subject := fmt.Sprintf("%s failed: %s", tool, code)
	if critical {
		subject = "CRITICAL: " + subject
	}
	who := c.Caller.ID
	if c.Caller.Type != "" {
		who += " (" + string(c.Caller.Type) + ")"
	}
	body := fmt.Sprintf("%s called %s and it failed with %s:\n\n%s\n\nThe call is audit commit %s (`git codex show %s`; `git codex log --errors` lists failures).",
		who, tool, code, msg, commit, review.ShortHash(commit))
	if esc.Folded > 0 {
		body += fmt.Sprintf("\n\n%d more failure(s) of this kind since %s were folded into this mail (one mail per hour).", esc.Folded, esc.LastMailAt.UTC().Format(time.RFC3339))
	}
	if (tool == forge.OpCreatePR || tool == forge.OpCreateIssues) && (code == tools.GitHubUnavailable || code == tools.TransientError) {
		body += "\n\nThe call is kept PENDING; `git codex github retry` replays it."
	}
	m, err := mail.Post(c, to, subject, body, "")
	if err != nil {
		return false, err
	}
	esc = Escalation{Key: key, To: to, Tool: tool, Code: code, LastMailID: m.ID, LastMailAt: now, LastError: msg,
		UpdatedAt: now, UpdatedBy: c.Caller.ID, Clock: tx.Clock()}
	return false, tx.Put(escalationPath(key), esc)
}

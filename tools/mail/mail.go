// Package mail is git codex's mail: the Mail record (mail/<recipient>/<x>/<y>/<id>.json),
// its tools (mail_send, mail_list_inbox, mail_read, mail_reply, one file
// each), its settings (mail.max_*_bytes), and what the nouns above it use to
// tell an agent something (Post) or to check a title and body (CheckText).
// It is the lowest of the nouns: it imports only the framework.
package mail

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
)

const Dir = "mail"

// Retain is the name `archive` takes read mail under (Kind.Retention).
const Retain = "mail"

func RecipientDir(recipient string) string { return Dir + "/" + recipient }

func Path(recipient, id string) string {
	return RecipientDir(recipient) + "/" + gitstate.Fanout(id) + "/" + id + ".json"
}

// mailKind: mail/<recipient>/<x>/<y>/<id>.json. A message is never deleted.
func mailKind() tools.Kind {
	k := tools.RecordKind(tools.Kind{Name: "mail", Dir: Dir, Depth: 4, Fanout: 2, Kept: true}, func(rel []string, name string, m *Mail) error {
		if m.ID != name || !mailIDPattern.MatchString(m.ID) || m.To != rel[0] || !tools.FannedOut(rel, m.ID) {
			return fmt.Errorf("mail record %q to %q does not belong at this path", m.ID, m.To)
		}
		return nil
	})
	k.Retention = Retain
	k.Archived = func(data []byte) bool {
		var m Mail
		return json.Unmarshal(data, &m) == nil && m.IsRead
	}
	return k
}

// Mail is one message. Everything but the read flag is immutable; ReadAt
// and Clock change when the recipient reads it.
type Mail struct {
	ID        string          `json:"id"`
	From      string          `json:"from"`
	FromType  tools.AgentType `json:"from_type"`
	To        string          `json:"to"`
	Subject   string          `json:"subject"`
	Body      string          `json:"body"`
	InReplyTo string          `json:"in_reply_to,omitempty"`
	IsRead    bool            `json:"is_read"`
	CreatedAt time.Time       `json:"created_at"`
	ReadAt    *time.Time      `json:"read_at"`
	ReadBy    string          `json:"read_by,omitempty"`
	Clock     gitstate.Clock  `json:"clock"`
}

// deliver checks a message's size, stores it in the recipient's inbox and
// marks the sender active.
func deliver(c *tools.Call, to, subject, body, inReplyTo string) (Mail, error) {
	if err := CheckText(c.Config, "subject", subject, "body", body); err != nil {
		return Mail{}, err
	}
	m, err := Post(c, to, subject, body, inReplyTo)
	if err != nil {
		return Mail{}, err
	}
	c.Target(m.ID)
	return m, TouchAgent(c)
}

// Post stores a message from the caller in to's inbox, unchecked: deliver
// checks what agents write; tools use it to tell an agent what they did
// (a task assigned, a lock released by someone else).
func Post(c *tools.Call, to, subject, body, inReplyTo string) (Mail, error) {
	tx := c.Tx
	m := Mail{
		ID: tx.NewID("m"), From: c.Caller.ID, FromType: c.Caller.Type, To: to,
		Subject: subject, Body: body, InReplyTo: inReplyTo,
		CreatedAt: tx.Now(), Clock: tx.Clock(),
	}
	return m, tx.Put(Path(to, m.ID), m)
}

// CheckText enforces the configured size limits on a title-like and a
// body-like field; both must be non-empty.
func CheckText(cfg *tools.Config, titleName, title, bodyName, body string) error {
	maxTitle, maxBody := cfg.IntValue("mail.max_subject_bytes"), cfg.IntValue("mail.max_body_bytes")
	switch {
	case strings.TrimSpace(title) == "":
		return tools.Errorf(tools.InvalidInput, "%s must not be empty", titleName).With("field", titleName)
	case strings.TrimSpace(body) == "":
		return tools.Errorf(tools.InvalidInput, "%s must not be empty", bodyName).With("field", bodyName)
	case len(title) > maxTitle:
		return tools.Errorf(tools.InvalidInput, "%s is %d bytes; the limit is %d (config mail.max_subject_bytes)", titleName, len(title), maxTitle).
			With("field", titleName).With("size", len(title)).With("limit", maxTitle)
	case len(body) > maxBody:
		return tools.Errorf(tools.InvalidInput, "%s is %d bytes; the limit is %d (config mail.max_body_bytes)", bodyName, len(body), maxBody).
			With("field", bodyName).With("size", len(body)).With("limit", maxBody)
	}
	return nil
}

// TouchAgent records that the calling agent was active now.
func TouchAgent(c *tools.Call) error {
	if c.Agent == nil {
		return nil
	}
	now := c.Tx.Now()
	c.Agent.LastActiveAt, c.Agent.UpdatedAt, c.Agent.UpdatedBy, c.Agent.Clock = &now, now, c.Caller.ID, c.Tx.Clock()
	return c.Tx.Put(tools.AgentPath(c.Agent.ID), c.Agent)
}

// InboxOf is the recipient directory a caller reads: an agent its own, a
// person the humans' shared inbox.
func InboxOf(c tools.Caller) string {
	if c.Type == tools.TypeHuman {
		return tools.HumanInbox
	}
	return c.ID
}

// mailIDPattern is the shape of ids NewID("m") makes; anything else cannot
// name a mail (and must not reach a record path).
var mailIDPattern = tools.LazyRegexp(`^m-[0-9a-z]{16}$`)

// ownMail finds a mail in the caller's inbox. Mail that exists in someone
// else's inbox is PERMISSION_DENIED; mail that exists nowhere is
// RESOURCE_NOT_FOUND.
func ownMail(c *tools.Call, id string) (Mail, error) {
	if !mailIDPattern.MatchString(id) {
		return Mail{}, tools.Errorf(tools.ResourceNotFound, "no mail %q; mail ids look like m-0123456789abcdef", id).With("mail_id", id)
	}
	var m Mail
	err := c.Tx.Get(Path(InboxOf(c.Caller), id), &m)
	if err == nil {
		return m, nil
	}
	if !errors.Is(err, gitstate.ErrNotFound) {
		return Mail{}, err
	}
	recipients, err := c.Tx.List(Dir)
	if err != nil {
		return Mail{}, err
	}
	for _, r := range recipients {
		if err := c.Tx.Get(Path(r.Name, id), &m); err == nil {
			return Mail{}, tools.Errorf(tools.PermissionDenied, "mail %s is addressed to %s, not to you; list your own with `git codex mail inbox`", id, m.To).
				With("mail_id", id)
		}
	}
	return Mail{}, tools.Errorf(tools.ResourceNotFound, "no mail %q; list your inbox with `git codex mail inbox --include-read`", id).With("mail_id", id)
}

func OneLineCut(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return tools.Truncate(s, 72)
}

// Mail's limits.
const (
	defaultMaxBodyBytes    = 64 * 1024
	defaultMaxSubjectBytes = 512
)

// mailKeys are mail's settings (decisions share its limits).
func mailKeys() []tools.ConfigKey {
	return []tools.ConfigKey{
		{Name: "mail.max_body_bytes", Kind: "int", Default: defaultMaxBodyBytes, Doc: "largest mail or decision body accepted, in bytes"},
		{Name: "mail.max_subject_bytes", Kind: "int", Default: defaultMaxSubjectBytes, Doc: "largest mail subject or decision title accepted, in bytes"},
	}
}

// Catalog is mail's tools, its record kind and its settings, for the
// assembly (tools/builtin).
func Catalog() tools.Catalog {
	return tools.Catalog{
		Tools:      []*tools.Tool{MailSend, MailListInbox, MailRead, MailReply},
		Kinds:      []tools.Kind{mailKind()},
		ConfigKeys: mailKeys(),
	}
}

package work

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
)

const dirMail = "mail"

func mailDir(recipient string) string { return dirMail + "/" + recipient }

func mailPath(recipient, id string) string {
	return mailDir(recipient) + "/" + gitstate.Fanout(id) + "/" + id + ".json"
}

// mailKind: mail/<recipient>/<x>/<y>/<id>.json. A message is never deleted.
func mailKind() tools.Kind {
	return tools.RecordKind(tools.Kind{Name: "mail", Dir: dirMail, Depth: 4, Fanout: 2, Kept: true}, func(rel []string, name string, m *Mail) error {
		if m.ID != name || !mailIDPattern.MatchString(m.ID) || m.To != rel[0] || !tools.FannedOut(rel, m.ID) {
			return fmt.Errorf("mail record %q to %q does not belong at this path", m.ID, m.To)
		}
		return nil
	})
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

// MailSendIn is mail_send's input.
type MailSendIn struct {
	To      string `json:"to,omitempty" jsonschema:"id of the agent to mail; give this or to_human, not both"`
	ToHuman bool   `json:"to_human,omitempty" jsonschema:"true to mail the humans' shared inbox instead of an agent"`
	Subject string `json:"subject" jsonschema:"one-line subject"`
	Body    string `text:"multiline" json:"body" jsonschema:"message text"`
}

// MailSent is what mail_send and mail_reply return.
type MailSent struct {
	MailID    string    `json:"mail_id"`
	To        string    `json:"to"`
	Timestamp time.Time `json:"timestamp"`
}

// MailSend sends a message to one agent or to the humans.
var MailSend = tools.Define("mail_send", "mail.send",
	"Send mail to another agent (to) or to the humans (to_human: true); exactly one of the two. The recipient reads it with mail_list_inbox and mail_read.",
	tools.CLI{Path: "mail send"},
	func(ctx context.Context, c *tools.Call, in MailSendIn) (MailSent, error) {
		if (in.To == "") == !in.ToHuman {
			return MailSent{}, tools.Errorf(tools.InvalidInput, "give exactly one recipient: either to (an agent id) or to_human: true")
		}
		to := tools.HumanInbox
		if !in.ToHuman {
			if _, err := tools.GetAgent(c.Tx, in.To); err != nil {
				return MailSent{}, err
			}
			to = in.To
		}
		m, err := deliver(c, to, in.Subject, in.Body, "")
		if err != nil {
			return MailSent{}, err
		}
		c.Summarize("%s -> %s: %s", c.Caller.ID, to, oneLineCut(in.Subject))
		return MailSent{MailID: m.ID, To: to, Timestamp: m.CreatedAt}, nil
	}).Hint(tools.Hints{Additive: true})

// deliver checks a message's size, stores it in the recipient's inbox and
// marks the sender active.
func deliver(c *tools.Call, to, subject, body, inReplyTo string) (Mail, error) {
	if err := checkText(c.Config, "subject", subject, "body", body); err != nil {
		return Mail{}, err
	}
	m, err := post(c, to, subject, body, inReplyTo)
	if err != nil {
		return Mail{}, err
	}
	c.Target(m.ID)
	return m, touchAgent(c)
}

// post stores a message from the caller in to's inbox, unchecked: deliver
// checks what agents write; tools use it to tell an agent what they did
// (a task assigned, a lock released by someone else).
func post(c *tools.Call, to, subject, body, inReplyTo string) (Mail, error) {
	tx := c.Tx
	m := Mail{
		ID: tx.NewID("m"), From: c.Caller.ID, FromType: c.Caller.Type, To: to,
		Subject: subject, Body: body, InReplyTo: inReplyTo,
		CreatedAt: tx.Now(), Clock: tx.Clock(),
	}
	return m, tx.Put(mailPath(to, m.ID), m)
}

// checkText enforces the configured size limits on a title-like and a
// body-like field; both must be non-empty.
func checkText(cfg *tools.Config, titleName, title, bodyName, body string) error {
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

// touchAgent records that the calling agent was active now.
func touchAgent(c *tools.Call) error {
	if c.Agent == nil {
		return nil
	}
	now := c.Tx.Now()
	c.Agent.LastActiveAt, c.Agent.UpdatedAt, c.Agent.UpdatedBy, c.Agent.Clock = &now, now, c.Caller.ID, c.Tx.Clock()
	return c.Tx.Put(tools.AgentPath(c.Agent.ID), c.Agent)
}

// inboxOf is the recipient directory a caller reads: an agent its own, a
// person the humans' shared inbox.
func inboxOf(c tools.Caller) string {
	if c.Type == tools.TypeHuman {
		return tools.HumanInbox
	}
	return c.ID
}

// MailListInboxIn is mail_list_inbox's input.
type MailListInboxIn struct {
	IncludeRead bool `json:"include_read,omitempty" jsonschema:"also list mail already read (default: unread only)"`
}

// Inbox is what mail_list_inbox returns, newest mail first.
type Inbox struct {
	Count       int    `json:"count"`
	UnreadCount int    `json:"unread_count"`
	Mails       []Mail `json:"mails"`
}

// MailListInbox lists the caller's mail.
var MailListInbox = tools.Define("mail_list_inbox", "mail.list_inbox",
	"List mail in your inbox, newest first: unread only unless include_read is true. People share the humans' inbox.",
	tools.CLI{Path: "mail inbox"},
	func(ctx context.Context, c *tools.Call, in MailListInboxIn) (Inbox, error) {
		out := Inbox{Mails: []Mail{}}
		err := tools.WalkJSON(c.Tx, mailDir(inboxOf(c.Caller)), func(m Mail) {
			if !m.IsRead {
				out.UnreadCount++
			}
			if in.IncludeRead || !m.IsRead {
				out.Mails = append(out.Mails, m)
			}
		})
		if err != nil {
			return Inbox{}, err
		}
		sort.Slice(out.Mails, func(i, j int) bool { return out.Mails[i].ID > out.Mails[j].ID })
		out.Count = len(out.Mails)
		c.Summarize("%s listed %d mail(s)", c.Caller.ID, out.Count)
		return out, nil
	}).Hint(tools.Hints{ReadOnly: true, Idempotent: true})

// MailReadIn is mail_read's input.
type MailReadIn struct {
	MailID string `json:"mail_id" jsonschema:"id of the mail, from mail_list_inbox"`
}

// MailRead returns one mail and marks it read.
var MailRead = tools.Define("mail_read", "mail.read",
	"Read one mail from your inbox and mark it read. Only its recipient may read it.",
	tools.CLI{Path: "mail read", Args: []string{"mail_id"}},
	func(ctx context.Context, c *tools.Call, in MailReadIn) (Mail, error) {
		m, err := ownMail(c, in.MailID)
		if err != nil {
			return Mail{}, err
		}
		if !m.IsRead {
			now := c.Tx.Now()
			m.IsRead, m.ReadAt, m.ReadBy, m.Clock = true, &now, c.Caller.ID, c.Tx.Clock()
			if err := c.Tx.Put(mailPath(inboxOf(c.Caller), m.ID), m); err != nil {
				return Mail{}, err
			}
		}
		c.Target(m.ID)
		c.Summarize("%s read %s", c.Caller.ID, m.ID)
		return m, nil
	}).Hint(tools.Hints{Idempotent: true})

// MailReplyIn is mail_reply's input.
type MailReplyIn struct {
	OriginalMailID string `json:"original_mail_id" jsonschema:"id of the mail you are answering"`
	Body           string `text:"multiline" json:"body" jsonschema:"reply text"`
}

// MailReply answers a mail to its sender.
var MailReply = tools.Define("mail_reply", "mail.reply",
	"Reply to a mail you received: the reply goes to its sender, with \"Re: \" added to the subject once.",
	tools.CLI{Path: "mail reply", Args: []string{"original_mail_id"}},
	func(ctx context.Context, c *tools.Call, in MailReplyIn) (MailSent, error) {
		orig, err := ownMail(c, in.OriginalMailID)
		if err != nil {
			return MailSent{}, err
		}
		if orig.From == tools.SystemSender {
			return MailSent{}, tools.Errorf(tools.InvalidInput, "mail %s comes from git codex itself; there is no one to reply to", orig.ID).With("mail_id", orig.ID)
		}
		to := tools.InboxFor(orig.From)
		if to != tools.HumanInbox {
			if _, err := tools.GetAgent(c.Tx, to); err != nil {
				return MailSent{}, err
			}
		}
		subject := orig.Subject
		if !strings.HasPrefix(subject, "Re: ") {
			subject = "Re: " + subject
		}
		m, err := deliver(c, to, subject, in.Body, orig.ID)
		if err != nil {
			return MailSent{}, err
		}
		c.Summarize("%s -> %s: %s", c.Caller.ID, to, oneLineCut(subject))
		return MailSent{MailID: m.ID, To: to, Timestamp: m.CreatedAt}, nil
	}).Hint(tools.Hints{Additive: true})

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
	err := c.Tx.Get(mailPath(inboxOf(c.Caller), id), &m)
	if err == nil {
		return m, nil
	}
	if !errors.Is(err, gitstate.ErrNotFound) {
		return Mail{}, err
	}
	recipients, err := c.Tx.List(dirMail)
	if err != nil {
		return Mail{}, err
	}
	for _, r := range recipients {
		if err := c.Tx.Get(mailPath(r.Name, id), &m); err == nil {
			return Mail{}, tools.Errorf(tools.PermissionDenied, "mail %s is addressed to %s, not to you; list your own with `git codex mail inbox`", id, m.To).
				With("mail_id", id)
		}
	}
	return Mail{}, tools.Errorf(tools.ResourceNotFound, "no mail %q; list your inbox with `git codex mail inbox --include-read`", id).With("mail_id", id)
}

func oneLineCut(s string) string {
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

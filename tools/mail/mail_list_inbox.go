package mail

import (
	"context"
	"sort"

	"github.com/gitcodex/git-codex/tools"
)

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
		err := tools.WalkJSON(c.Tx, RecipientDir(InboxOf(c.Caller)), func(m Mail) {
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

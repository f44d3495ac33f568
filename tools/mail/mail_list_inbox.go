package mail

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/gitcodex/git-codex/gitstate"
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
		v, err := c.Tx.Reduce(RecipientDir(InboxOf(c.Caller)), inboxReduction(in.IncludeRead))
		if err != nil {
			return Inbox{}, err
		}
		part := v.(inboxPart)
		out := Inbox{UnreadCount: part.unread, Mails: slices.Clone(part.mails)}
		if out.Mails == nil {
			out.Mails = []Mail{}
		}
		sort.Slice(out.Mails, func(i, j int) bool { return out.Mails[i].ID > out.Mails[j].ID })
		out.Count = len(out.Mails)
		c.Summarize("%s listed %d mail(s)", c.Caller.ID, out.Count)
		return out, nil
	}).Hint(tools.Hints{ReadOnly: true, Idempotent: true})

// inboxPart is what an inbox's directory holds for mail_list_inbox: its
// unread count and the mail listed (unread only, or all).
type inboxPart struct {
	unread int
	mails  []Mail
}

// inboxReduction reads an inbox by directory (gitstate.Reduction): an
// agent's MCP server polls it every 30 s, and at retention's default an
// inbox holds a month of read mail, of which a poll finds one directory
// or two changed.
func inboxReduction(includeRead bool) gitstate.Reduction {
	name := "mail.inbox.unread"
	if includeRead {
		name = "mail.inbox.all"
	}
	return gitstate.Reduction{
		Name: name,
		Leaf: func(path string, data []byte) (any, error) {
			var m Mail
			if err := json.Unmarshal(data, &m); err != nil {
				return nil, fmt.Errorf("decode %s: %w", path, err)
			}
			p := inboxPart{}
			if !m.IsRead {
				p.unread = 1
			}
			if includeRead || !m.IsRead {
				p.mails = []Mail{m}
			}
			return p, nil
		},
		Join: func(parts []any) any {
			var out inboxPart
			for _, v := range parts {
				p := v.(inboxPart)
				out.unread += p.unread
				out.mails = append(out.mails, p.mails...)
			}
			return out
		},
	}
}

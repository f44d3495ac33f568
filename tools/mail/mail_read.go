package mail

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
)

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
			if err := c.Tx.Put(Path(InboxOf(c.Caller), m.ID), m); err != nil {
				return Mail{}, err
			}
		}
		c.Target(m.ID)
		c.Summarize("%s read %s", c.Caller.ID, m.ID)
		return m, nil
	}).Hint(tools.Hints{Idempotent: true})

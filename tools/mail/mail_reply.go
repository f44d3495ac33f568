package mail

import (
	"context"
	"strings"

	"github.com/gitcodex/git-codex/tools"
)

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
		c.Summarize("%s -> %s: %s", c.Caller.ID, to, OneLineCut(subject))
		return MailSent{MailID: m.ID, To: to, Timestamp: m.CreatedAt}, nil
	}).Hint(tools.Hints{Additive: true})

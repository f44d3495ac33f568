package mail

import (
	"context"
	"time"

	"github.com/gitcodex/git-codex/tools"
)

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
		c.Summarize("%s -> %s: %s", c.Caller.ID, to, OneLineCut(in.Subject))
		return MailSent{MailID: m.ID, To: to, Timestamp: m.CreatedAt}, nil
	}).Hint(tools.Hints{Additive: true})

package decision

import (
	"context"
	"time"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/mail"
)

// LogDecisionIn is log_decision's input.
type LogDecisionIn struct {
	Title string `json:"title" jsonschema:"the decision in one line"`
	Body  string `text:"multiline" json:"body" jsonschema:"why: the reasoning and the alternatives rejected"`
}

// DecisionLogged is what log_decision returns.
type DecisionLogged struct {
	LogID     string    `json:"log_id"`
	Timestamp time.Time `json:"timestamp"`
}

// LogDecision records a decision on purpose. (Every call is in the audit
// trail anyway; this is for the reasoning behind the work.)
var LogDecision = tools.Define("log_decision", "system.log_decision",
	"Log a decision and its reasoning, so people and other agents can see why the work went the way it did.",
	tools.CLI{Path: "decision log"},
	func(ctx context.Context, c *tools.Call, in LogDecisionIn) (DecisionLogged, error) {
		if err := mail.CheckText(c.Config, "title", in.Title, "body", in.Body); err != nil {
			return DecisionLogged{}, err
		}
		tx := c.Tx
		d := Decision{
			ID: tx.NewID("d"), Title: in.Title, Body: in.Body,
			Actor: c.Caller.ID, ActorType: c.Caller.Type, CreatedAt: tx.Now(), Clock: tx.Clock(),
		}
		c.Target(d.ID)
		c.Summarize("%s decided: %s", c.Caller.ID, mail.OneLineCut(in.Title))
		return DecisionLogged{LogID: d.ID, Timestamp: d.CreatedAt}, tx.Put(decisionPath(d.ID), d)
	}).Hint(tools.Hints{Additive: true})

package tools

import (
	"context"
	"fmt"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
)

const dirDecisions = "decisions"

func decisionPath(id string) string {
	return dirDecisions + "/" + gitstate.Fanout(id) + "/" + id + ".json"
}

// decisionKind: decisions/<x>/<y>/<id>.json. A decision is never deleted.
func decisionKind() Kind {
	return recordKind(Kind{Name: "decision", Dir: dirDecisions, Depth: 3, Fanout: 2, Kept: true}, func(rel []string, name string, d *Decision) error {
		if d.ID != name || !fannedOut(rel, d.ID) {
			return fmt.Errorf("decision record %q does not belong at this path", d.ID)
		}
		return nil
	})
}

// Decision is a decision an agent or person logged on purpose (every call
// is logged anyway, as a commit). Immutable.
type Decision struct {
	ID        string         `json:"id"`
	Title     string         `json:"title"`
	Body      string         `json:"body"`
	Actor     string         `json:"actor"`
	ActorType AgentType      `json:"actor_type"`
	CreatedAt time.Time      `json:"created_at"`
	Clock     gitstate.Clock `json:"clock"`
}

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
var LogDecision = Define("log_decision", "system.log_decision",
	"Log a decision and its reasoning, so people and other agents can see why the work went the way it did.",
	CLI{Path: "decision log"},
	func(ctx context.Context, c *Call, in LogDecisionIn) (DecisionLogged, error) {
		if err := checkText(c.Config, "title", in.Title, "body", in.Body); err != nil {
			return DecisionLogged{}, err
		}
		tx := c.Tx
		d := Decision{
			ID: tx.NewID("d"), Title: in.Title, Body: in.Body,
			Actor: c.Caller.ID, ActorType: c.Caller.Type, CreatedAt: tx.Now(), Clock: tx.Clock(),
		}
		c.Target(d.ID)
		c.Summarize("%s decided: %s", c.Caller.ID, oneLineCut(in.Title))
		return DecisionLogged{LogID: d.ID, Timestamp: d.CreatedAt}, tx.Put(decisionPath(d.ID), d)
	}).Hint(Hints{Additive: true})

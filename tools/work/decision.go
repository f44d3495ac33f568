package work

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/mail"
)

const dirDecisions = "decisions"

// decisionIDPattern is the shape of ids NewID("d") makes; anything else
// cannot name a decision (and must not reach a record path).
var decisionIDPattern = tools.LazyRegexp(`^d-[0-9a-z]{16}$`)

func decisionPath(id string) string {
	return dirDecisions + "/" + gitstate.Fanout(id) + "/" + id + ".json"
}

// decisionKind: decisions/<x>/<y>/<id>.json. A decision is never deleted.
func decisionKind() tools.Kind {
	return tools.RecordKind(tools.Kind{Name: "decision", Dir: dirDecisions, Depth: 3, Fanout: 2, Kept: true}, func(rel []string, name string, d *Decision) error {
		if d.ID != name || !tools.FannedOut(rel, d.ID) {
			return fmt.Errorf("decision record %q does not belong at this path", d.ID)
		}
		return nil
	})
}

// Decision is a decision an agent or person logged on purpose (every call
// is logged anyway, as a commit). Immutable.
type Decision struct {
	ID        string          `json:"id"`
	Title     string          `json:"title"`
	Body      string          `json:"body"`
	Actor     string          `json:"actor"`
	ActorType tools.AgentType `json:"actor_type"`
	CreatedAt time.Time       `json:"created_at"`
	Clock     gitstate.Clock  `json:"clock"`
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

// DecisionListIn is decision_list's input.
type DecisionListIn struct {
	Actor string `json:"actor,omitempty" jsonschema:"only decisions logged by this caller id"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many, newest first (default 50)"`
}

// DecisionItem is one decision in a list: everything but the body, which
// decision_show returns.
type DecisionItem struct {
	ID        string          `json:"id"`
	Title     string          `json:"title"`
	Actor     string          `json:"actor"`
	ActorType tools.AgentType `json:"actor_type"`
	CreatedAt time.Time       `json:"created_at"`
	Clock     gitstate.Clock  `json:"clock"`
}

// DecisionList is what decision_list returns, newest first.
type DecisionList struct {
	Count     int            `json:"count"` // decisions that matched, before the limit
	Decisions []DecisionItem `json:"decisions"`
}

// defaultDecisionLimit bounds a listing when the caller sets no limit: an
// agent's context is small and the log only grows.
const defaultDecisionLimit = 50

// DecisionListTool lists logged decisions.
var DecisionListTool = tools.Define("decision_list", "system.read_decisions",
	"List logged decisions, newest first (titles; decision_show gives the reasoning), optionally only one caller's.",
	tools.CLI{Path: "decision list"},
	func(ctx context.Context, c *tools.Call, in DecisionListIn) (DecisionList, error) {
		if in.Limit < 0 {
			return DecisionList{}, tools.Errorf(tools.InvalidInput, "limit must be positive, not %d", in.Limit).With("field", "limit")
		}
		limit := in.Limit
		if limit == 0 {
			limit = defaultDecisionLimit
		}
		out := DecisionList{Decisions: []DecisionItem{}}
		err := tools.WalkJSON(c.Tx, dirDecisions, func(d Decision) {
			if in.Actor == "" || d.Actor == in.Actor {
				out.Decisions = append(out.Decisions, DecisionItem{ID: d.ID, Title: d.Title, Actor: d.Actor, ActorType: d.ActorType, CreatedAt: d.CreatedAt, Clock: d.Clock})
			}
		})
		if err != nil {
			return DecisionList{}, err
		}
		sort.Slice(out.Decisions, func(i, j int) bool {
			a, b := out.Decisions[i], out.Decisions[j]
			if a.Clock != b.Clock {
				return a.Clock > b.Clock
			}
			return a.ID > b.ID
		})
		out.Count = len(out.Decisions)
		if len(out.Decisions) > limit {
			out.Decisions = out.Decisions[:limit]
		}
		c.Summarize("%s listed %d decision(s)", c.Caller.ID, len(out.Decisions))
		return out, nil
	}).Hint(tools.Hints{ReadOnly: true, Idempotent: true})

// DecisionShowIn is decision_show's input.
type DecisionShowIn struct {
	ID string `json:"id" jsonschema:"the decision's id, e.g. d-0123456789abcdef"`
}

// DecisionShow returns one decision with its reasoning.
var DecisionShow = tools.Define("decision_show", "system.read_decisions",
	"Show one logged decision: its title, reasoning, who logged it and when.",
	tools.CLI{Path: "decision show", Args: []string{"id"}},
	func(ctx context.Context, c *tools.Call, in DecisionShowIn) (Decision, error) {
		notFound := tools.Errorf(tools.ResourceNotFound, "no decision %q; list them with `git codex decision list`", in.ID).With("decision_id", in.ID)
		if !decisionIDPattern.MatchString(in.ID) {
			return Decision{}, notFound
		}
		var d Decision
		err := c.Tx.Get(decisionPath(in.ID), &d)
		if errors.Is(err, gitstate.ErrNotFound) {
			return Decision{}, notFound
		}
		if err != nil {
			return Decision{}, err
		}
		c.Target(d.ID)
		c.Summarize("%s looked at decision %s", c.Caller.ID, d.ID)
		return d, nil
	}).Hint(tools.Hints{ReadOnly: true, Idempotent: true})

package decision

import (
	"context"
	"sort"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
)

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

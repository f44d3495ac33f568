package decision

import (
	"context"
	"errors"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
)

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

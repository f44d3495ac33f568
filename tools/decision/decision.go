// Package decision is git codex's decision log: the Decision record
// (decisions/<x>/<y>/<id>.json) and its tools (log_decision, decision_list,
// decision_show, one file each). It imports the framework and tools/mail
// (whose limits its titles and bodies share).
package decision

import (
	"fmt"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
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

// Catalog is decisions' tools and record kind, for the assembly
// (tools/builtin).
func Catalog() tools.Catalog {
	return tools.Catalog{
		Tools: []*tools.Tool{LogDecision, DecisionListTool, DecisionShow},
		Kinds: []tools.Kind{decisionKind()},
	}
}

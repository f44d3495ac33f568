package review

import (
	"fmt"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
)

func RelationshipPath(parent, child string) string {
	return dirRelationships + "/" + parent + "/" + child + ".json"
}

// Relationship links two instances: a coder and the reviewer it spawned,
// with the iteration of the review loop. Never deleted: the iteration
// count comes from them.
type Relationship struct {
	Type           string         `json:"type"`
	Parent         string         `json:"parent"`
	Child          string         `json:"child"`
	Iteration      int            `json:"iteration"`
	ReviewedCommit string         `json:"reviewed_commit"`
	CreatedAt      time.Time      `json:"created_at"`
	CreatedBy      string         `json:"created_by"`
	Clock          gitstate.Clock `json:"clock"`
}

// relationshipKind: relationships/<parent>/<child>.json.
func relationshipKind() tools.Kind {
	return tools.RecordKind(tools.Kind{Name: "relationship", Dir: dirRelationships, Depth: 2, Kept: true}, func(rel []string, name string, r *Relationship) error {
		if r.Parent != rel[0] || r.Child != name || tools.ValidateAgentID(r.Parent) != nil || tools.ValidateAgentID(r.Child) != nil {
			return fmt.Errorf("relationship %s -> %s does not belong at this path", r.Parent, r.Child)
		}
		return nil
	})
}

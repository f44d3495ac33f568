package review

import (
	"fmt"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
)

// DirActiveReviews holds one record per coder under review: its active
// review's claim.
const DirActiveReviews = "reviews/active"

// ActiveReviewPath is where coder's active review record lives.
func ActiveReviewPath(coder string) string { return DirActiveReviews + "/" + coder + ".json" }

// activeReviewKind: reviews/active/<coder>.json. One active review per
// coder, also across machines.
func activeReviewKind() tools.Kind {
	k := tools.Kind{Name: "review", Dir: DirActiveReviews, Depth: 1, Claim: &tools.ClaimRule{Resource: "coder", Coupled: []string{"review"}}}
	return tools.RecordKind(k, func(_ []string, name string, r *ActiveReview) error {
		if r.Coder != name || tools.ValidateAgentID(r.Coder) != nil {
			return fmt.Errorf("active review record names coder %q", r.Coder)
		}
		return tools.ValidClaim(r.Claim)
	})
}

// ActiveReview holds the claim on a coder's one active review: the review
// loop claims it for the reviewer it spawns and frees it when feedback is
// sent; sync keeps it to one holder. Mutable.
type ActiveReview struct {
	Coder     string         `json:"coder"`
	Review    string         `json:"review,omitempty"`
	Claim     *tools.Claim   `json:"claim" jsonschema:"the reviewer holding the coder's review; null when none is active"`
	UpdatedAt time.Time      `json:"updated_at"`
	UpdatedBy string         `json:"updated_by"`
	Clock     gitstate.Clock `json:"clock"`
}

// endActiveReview is an AgentEnded hook (tools.Hooks): a reviewer that
// ended (killed, dead, or never started) while it held its coder's
// active review frees it, and the coder, waiting for it, is active again.
func endActiveReview(c *tools.Call, a *tools.Agent) error {
	if a.ReviewOf == "" {
		return nil
	}
	var active ActiveReview
	if err := c.Tx.Get(ActiveReviewPath(a.ReviewOf), &active); err != nil || active.Claim == nil || active.Claim.Holder != a.ID {
		return nil
	}
	coder, err := tools.GetAgent(c.Tx, a.ReviewOf)
	if err != nil {
		return nil
	}
	next := coder.Status
	if next == tools.StatusWaitingReview {
		next = tools.StatusActive
	}
	return endReview(c, coder.ID, a.ID, next)
}

package work

import (
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/forge"
)

// pendingCalls lists the ids of PENDING GitHub calls but skip: the calls
// create_pull_request and create_issues have forge replay after their own
// (Run.ReplayOthers), read in their transaction.
func pendingCalls(c *tools.Call, skip string) ([]string, error) {
	var ids []string
	err := tools.WalkJSON(c.Tx, forge.Dir, func(g forge.GitHubCall) {
		if g.State == forge.GitHubPending && g.ID != skip {
			ids = append(ids, g.ID)
		}
	})
	return ids, err
}

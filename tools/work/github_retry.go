package work

import (
	"context"
	"sort"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/forge"
)

// GitHubRetryIn is github_retry's input.
type GitHubRetryIn struct {
	ID   string `json:"id,omitempty" jsonschema:"replay only this call (default: every PENDING call you may replay)"`
	List bool   `json:"list,omitempty" jsonschema:"only list the PENDING calls; replay nothing"`
}

// GitHubRetried is what github_retry returns.
type GitHubRetried struct {
	Count int                `json:"count"`
	Calls []forge.GitHubCall `json:"calls" jsonschema:"the calls replayed (or listed), as recorded afterwards"`
}

// GitHubRetry replays GitHub calls that are still PENDING.
var GitHubRetry = tools.Define("github_retry", "github.retry",
	"Replay GitHub calls still PENDING (GitHub was unreachable, down or rate-limited): each asks GitHub first whether it was done, so nothing is sent twice. "+
		"People and supervisors replay anyone's; agents their own. With list: true, only list them.",
	tools.CLI{Path: "github retry", Args: []string{"id"}},
	func(ctx context.Context, c *tools.Call, in GitHubRetryIn) (*GitHubRetried, error) {
		out := &GitHubRetried{Calls: []forge.GitHubCall{}}
		if in.ID != "" {
			g, err := forge.GetCall(c.Tx, in.ID)
			if err != nil {
				return nil, err
			}
			if g.Caller != c.Caller.ID && !tools.MayForce(c.Caller.Type) {
				return nil, tools.Errorf(tools.PermissionDenied, "GitHub call %s is %s's; only they, a person or a supervisor may replay it", g.ID, g.Caller).With("call_id", g.ID)
			}
			if g.State != forge.GitHubPending {
				return nil, tools.Errorf(tools.InvalidInput, "GitHub call %s is %s, not PENDING: nothing to replay", g.ID, g.State).With("call_id", g.ID).With("state", g.State)
			}
			out.Calls = append(out.Calls, g)
		} else {
			err := tools.WalkJSON(c.Tx, forge.Dir, func(g forge.GitHubCall) {
				if g.State == forge.GitHubPending && (g.Caller == c.Caller.ID || tools.MayForce(c.Caller.Type)) {
					out.Calls = append(out.Calls, g)
				}
			})
			if err != nil {
				return nil, err
			}
			sort.Slice(out.Calls, func(i, j int) bool { return out.Calls[i].ID < out.Calls[j].ID })
		}
		out.Count = len(out.Calls)
		if in.List || out.Count == 0 {
			c.Summarize("%s listed %d pending GitHub call(s)", c.Caller.ID, out.Count)
			return out, nil
		}
		c.Summarize("%s replays %d pending GitHub call(s)", c.Caller.ID, out.Count)
		c.After(func(ctx context.Context, f *tools.Followup) error {
			r, err := forge.NewRun(ctx, f, taskOutcome)
			if err != nil {
				return err
			}
			var first error
			for i, g := range out.Calls {
				done, err := r.Make(ctx, g.ID)
				out.Calls[i] = done
				if err != nil && first == nil {
					first = err
				}
			}
			if len(out.Calls) == 1 {
				return first // one call asked for: its outcome is the answer
			}
			return nil
		})
		return out, nil
	})

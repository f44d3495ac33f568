package instance

import (
	"context"
	"strings"

	"github.com/gitcodex/git-codex/tools"
)

// RecordNudge records what became of a line typed into an instance's pane
// after the commit of the call that decided it (a nudge cannot be undone,
// so it comes after that commit, and its outcome is one more record): the
// line taken and what showed it (turn_started, echoed, read, left_input),
// or nudgeErr (NUDGE_NOT_DELIVERED, with what the pane showed). Without
// it the trail said only "nudged" whether or not the agent ever saw the
// line: a review loop that stalled in CI left nothing to tell a coder busy
// past the wait from a line it dropped. what names the line ("the review
// feedback f-..."). It returns Record's own failure, if any, besides
// nudgeErr.
func RecordNudge(ctx context.Context, f *tools.Followup, a tools.Agent, what, how string, nudgeErr error) error {
	err := f.Record(ctx, func(c *tools.Call) error {
		c.Target(a.ID)
		if nudgeErr != nil {
			return nudgeErr
		}
		c.Summarize("%s took %s (%s)", a.ID, what, strings.ReplaceAll(how, "_", " "))
		return nil
	})
	if err != nil && nudgeErr != nil && tools.AsError(err).Code == tools.AsError(nudgeErr).Code {
		return nil // the nudge's own error, recorded
	}
	return err
}

package instance

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
)

// InstanceReap finds instances that died and cleans up.
var InstanceReap = tools.Define("instance_reap", "instance.reap",
	"Mark instances whose session died (or whose spawn crashed) FAILED, and delegated sessions whose process died FAILED, terminate reviews past review.timeout_hours, then clean up as `cleanup` does. Safe from cron and when run concurrently.",
	tools.CLI{Path: "reap"},
	func(ctx context.Context, c *tools.Call, in CleanupIn) (*CleanedUp, error) {
		return sweep(c, in, true)
	})

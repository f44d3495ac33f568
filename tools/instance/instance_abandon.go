package instance

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
)

// InstanceAbandon gives up on an instance's work: ABANDONED, its session killed.
var InstanceAbandon = tools.Define("instance_abandon", "instance.abandon",
	"Give up on an instance's approach: it becomes ABANDONED and its tmux session is killed; `git codex cleanup` then removes its worktree and branch, saving any work in them first.",
	tools.CLI{Path: "abandon", Args: []string{"id"}},
	func(ctx context.Context, c *tools.Call, in InstanceIDIn) (*Ended, error) {
		return endInstance(c, in.ID, tools.StatusAbandoned, "abandoned by "+c.Caller.ID)
	})

package tmux

import (
	"slices"
	"time"
)

// lateRounds bounds how often Kill looks again for processes a session's
// processes started while they were being ended.
const lateRounds = 3

// endLateProcs ends what the panes' processes started while they were
// being ended (seen, had, the processes already ended): a program that
// runs a command as it exits (Claude Code ran git on SIGTERM, and under
// load that git outlived the kill, found by agents_claude_auth's noprocs)
// leaves it in the pane's session, where treeOf finds it, though it was
// born after both of Kill's looks. It returns those still running after
// SIGKILL.
func endLateProcs(roots []int, had []proc, grace time.Duration) []proc {
	var left []proc
	for range lateRounds {
		var late []proc
		for _, p := range treeOf(roots) {
			if !slices.Contains(had, p) {
				late = append(late, p)
			}
		}
		if len(late) == 0 {
			break
		}
		had = append(had, late...)
		left = append(left, endProcs(late, grace)...)
	}
	return left
}

package tmux

import (
	"fmt"
	"strings"
)

// PaneAsleep looks at the processes of the pane whose process is pid (its
// tree, as Kill finds it): set names them (pid and start time; two looks
// with the same set saw the same processes, none started or gone between),
// and asleep says that every one of them was sleeping, blocked waiting for
// something (input, a timer, a child, the network), or stopped. A program
// that exits at once never waits so: it runs to its end, and while it has
// not run yet (a loaded machine may not schedule a fresh process for a
// second) it is runnable. So a pane seen asleep twice with the same set
// has a program that got going and is waiting, where a single look could
// fall between one process going to sleep and its child being listed.
// A pane whose process is gone has nothing asleep. known is false where
// there is no process table.
func PaneAsleep(pid int) (set string, asleep, known bool) {
	all, ok := processTable()
	if !ok {
		return "", false, false
	}
	if _, ok := all[pid]; !ok || pid <= 1 {
		return "", false, true
	}
	procs := treeIn(all, []int{pid})
	var b strings.Builder
	asleep = true
	for _, p := range procs {
		fmt.Fprintf(&b, "%d:%d ", p.pid, p.start)
		switch all[p.pid].state {
		case 'S', 'I', 'T', 't':
		default:
			asleep = false
		}
	}
	return b.String(), asleep, true
}

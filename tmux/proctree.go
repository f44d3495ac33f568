package tmux

import (
	"os"
	"slices"
	"syscall"
	"time"
)

// DefaultKillGrace is how long Kill waits, after SIGTERM, for the
// processes of a session's panes to exit before it sends SIGKILL.
const DefaultKillGrace = 5 * time.Second

// A proc is one process, named by its pid and its start time (clock ticks
// after boot), so that a pid the kernel has since given to another
// process is never signalled.
type proc struct {
	pid   int
	start uint64
}

// procStat is what the process table says of one process.
type procStat struct {
	ppid, pgrp, session int
	start               uint64
	zombie              bool
	// state is the first letter of its state as the kernel reports it
	// (R running, S sleeping, D disk wait, T stopped, I idle, ...).
	state byte
}

// treeOf lists the live processes that belong to the panes whose process
// ids are roots: every process in a session or process group one of them
// leads (tmux makes each pane's process a session leader, so this finds
// children whose parent has died, reparented elsewhere), and every
// descendant of those (one that made a session of its own, as a daemon
// does). Without a process table it lists the roots alone.
func treeOf(roots []int) []proc {
	all, ok := processTable()
	if !ok {
		var out []proc
		for _, r := range roots {
			if r > 1 {
				out = append(out, proc{pid: r})
			}
		}
		return out
	}
	return treeIn(all, roots)
}

// treeIn is treeOf in the process table all.
func treeIn(all map[int]procStat, roots []int) []proc {
	self := os.Getpid()
	in := map[int]bool{}
	for pid, st := range all {
		if slices.Contains(roots, pid) || slices.Contains(roots, st.session) || slices.Contains(roots, st.pgrp) {
			in[pid] = true
		}
	}
	// descendants, to a fixed point (the table is small)
	for grew := true; grew; {
		grew = false
		for pid, st := range all {
			if !in[pid] && in[st.ppid] {
				in[pid], grew = true, true
			}
		}
	}
	var out []proc
	for pid := range in {
		if pid > 1 && pid != self {
			out = append(out, proc{pid: pid, start: all[pid].start})
		}
	}
	slices.SortFunc(out, func(a, b proc) int { return a.pid - b.pid })
	return out
}

// alive reports whether p still runs: its pid names a process that is not
// a zombie and started when p did.
func (p proc) alive() bool {
	st, ok := readStat(p.pid)
	if !ok {
		// no process table: ask the kernel
		return p.start == 0 && syscall.Kill(p.pid, 0) == nil
	}
	return !st.zombie && (p.start == 0 || st.start == p.start)
}

// signal sends sig to p if it is still the process it was.
func (p proc) signal(sig syscall.Signal) {
	if p.alive() {
		syscall.Kill(p.pid, sig)
	}
}

// endProcs sends SIGTERM to every process of procs still running, waits
// up to grace for them to exit, then sends SIGKILL to those left and
// waits (briefly) for the kernel to end them. It returns the processes
// that were still there after SIGKILL (none, unless one is stuck in the
// kernel).
func endProcs(procs []proc, grace time.Duration) []proc {
	for _, p := range procs {
		p.signal(syscall.SIGTERM)
		// a stopped process acts on SIGTERM once it runs again
		p.signal(syscall.SIGCONT)
	}
	left := waitGone(procs, grace)
	for _, p := range left {
		p.signal(syscall.SIGKILL)
	}
	return waitGone(left, time.Second)
}

// waitGone polls until none of procs runs, or wait has passed, and
// returns those still running.
func waitGone(procs []proc, wait time.Duration) []proc {
	deadline := time.Now().Add(wait)
	for {
		var left []proc
		for _, p := range procs {
			if p.alive() {
				left = append(left, p)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// EndProcessesWithEnv ends every process of this user whose environment
// holds entry ("NAME=value"), TERM then KILL after grace as Kill does, and
// returns how many there were. A marker in the environment is what every
// descendant inherits, whatever process group or session it moved to: git
// codex marks a delegated turn's agent with CODEX_DELEGATION=<id>, so what
// the turn started is found after its runner died. Without a process
// table that shows environments (darwin has none) it finds nothing.
func EndProcessesWithEnv(entry string, grace time.Duration) int {
	procs := processesWithEnv(entry)
	endProcs(procs, grace)
	return len(procs)
}

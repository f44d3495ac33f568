//go:build !linux || codexps

package tmux

import (
	"bytes"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Where there is no /proc (darwin, the BSDs), the process table is what
// ps(1) prints: POSIX names pid, ppid, pgid and stat's first letter, and
// lstart (the start time, to the second) is in both the BSD and the procps
// ps. The session is not portable (darwin's "sess" is a kernel address),
// so a process that left its pane's process group is found only as a
// descendant of a pane process that still runs. Environments of other
// processes are not readable here, so processesWithEnv finds nothing.
//
// The build tag codexps selects this table on Linux too, so its parsing is
// tested there against the same process trees as /proc's
// (go test -tags codexps ./tmux).

// psFields is the ps column list: lstart is last because it holds spaces.
const psFields = "pid=,ppid=,pgid=,stat=,lstart="

// psStartLayout is lstart's layout in both ps implementations.
const psStartLayout = "Mon Jan _2 15:04:05 2006"

// parsePSLine reads one line of `ps -o` psFields.
func parsePSLine(line []byte) (int, procStat, bool) {
	f := bytes.Fields(line)
	if len(f) < 5 {
		return 0, procStat{}, false
	}
	num := func(b []byte) (int, bool) { n, err := strconv.Atoi(string(b)); return n, err == nil }
	pid, ok1 := num(f[0])
	ppid, ok2 := num(f[1])
	pgrp, ok3 := num(f[2])
	if !ok1 || !ok2 || !ok3 {
		return 0, procStat{}, false
	}
	var start uint64
	if t, err := time.ParseInLocation(psStartLayout, strings.Join(strings.Fields(string(bytes.Join(f[4:], []byte{' '}))), " "), time.Local); err == nil && t.Unix() > 0 {
		start = uint64(t.Unix())
	}
	return pid, procStat{ppid: ppid, pgrp: pgrp, session: -1, start: start, zombie: f[3][0] == 'Z', state: f[3][0]}, true
}

// runPS runs ps with LC_ALL=C, so lstart is in the layout above.
func runPS(args ...string) ([]byte, error) {
	cmd := exec.Command("ps", args...)
	cmd.Env = append(cmd.Environ(), "LC_ALL=C")
	return cmd.Output()
}

// readStat asks ps about one process.
func readStat(pid int) (procStat, bool) {
	out, err := runPS("-o", psFields, "-p", strconv.Itoa(pid))
	if err != nil {
		return procStat{}, false
	}
	for _, line := range bytes.Split(out, []byte{'\n'}) {
		if p, st, ok := parsePSLine(line); ok && p == pid {
			return st, true
		}
	}
	return procStat{}, false
}

// processTable lists every live process (zombies left out); false when
// ps cannot run.
func processTable() (map[int]procStat, bool) {
	out, err := runPS("-A", "-o", psFields)
	if err != nil {
		return nil, false
	}
	all := map[int]procStat{}
	for _, line := range bytes.Split(out, []byte{'\n'}) {
		if pid, st, ok := parsePSLine(line); ok && !st.zombie {
			all[pid] = st
		}
	}
	return all, true
}

// processesWithEnv finds nothing: ps does not show other processes'
// environments portably.
func processesWithEnv(string) []proc { return nil }

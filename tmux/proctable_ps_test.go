//go:build !linux || codexps

package tmux

import (
	"os"
	"testing"
)

// ps's lines, as darwin's and procps's ps print them for psFields, parse
// to the same fields /proc gives.
func TestParsePSLine(t *testing.T) {
	pid, st, ok := parsePSLine([]byte("  4242     1  4242 Ss   Thu Nov 26 17:22:41 2026"))
	if !ok || pid != 4242 || st.ppid != 1 || st.pgrp != 4242 || st.zombie || st.start == 0 {
		t.Fatalf("parsePSLine = %d %+v %v", pid, st, ok)
	}
	if _, st, ok := parsePSLine([]byte("77 1 77 Z+ Thu Nov  5 01:02:03 2026")); !ok || !st.zombie {
		t.Fatalf("zombie line = %+v %v", st, ok)
	}
	for _, bad := range []string{"", "PID PPID PGID STAT STARTED", "1 2 3"} {
		if _, _, ok := parsePSLine([]byte(bad)); ok {
			t.Errorf("parsePSLine(%q) accepted", bad)
		}
	}
}

// The table ps gives holds this process, with its parent and a start time.
func TestPSTableHoldsThisProcess(t *testing.T) {
	all, ok := processTable()
	if !ok {
		t.Skip("ps cannot run here")
	}
	st, found := all[os.Getpid()]
	if !found || st.ppid != os.Getppid() || st.start == 0 {
		t.Fatalf("this process in ps's table: %+v %v", st, found)
	}
	if one, ok := readStat(os.Getpid()); !ok || one.start != st.start {
		t.Fatalf("readStat = %+v %v, table says %+v", one, ok, st)
	}
}

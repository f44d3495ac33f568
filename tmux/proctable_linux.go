//go:build linux && !codexps

package tmux

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// On Linux the process table is /proc: it names every process, its
// parent, group, session and start time, and (for this user's processes)
// its environment.

// readStat reads /proc/<pid>/stat. The command name (field 2) is in
// parentheses and may itself hold spaces and parentheses: the fields
// after it start after the last ')'.
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3 (state)
	if len(f) < 20 {
		return procStat{}, false
	}
	num := func(j int) int { n, _ := strconv.Atoi(string(f[j])); return n }
	start, _ := strconv.ParseUint(string(f[19]), 10, 64) // field 22
	return procStat{ppid: num(1), pgrp: num(2), session: num(3), start: start, zombie: f[0][0] == 'Z' || f[0][0] == 'X', state: f[0][0]}, true
}

// processTable lists every live process (zombies left out); false when
// /proc cannot be read.
func processTable() (map[int]procStat, bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	all := map[int]procStat{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok && !st.zombie {
			all[pid] = st
		}
	}
	return all, true
}

// processesWithEnv lists this user's live processes (not this one) whose
// environment holds entry ("NAME=value").
func processesWithEnv(entry string) []proc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte(entry)
	self := os.Getpid()
	var procs []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 1 || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue // gone, or another user's
		}
		if !slices.ContainsFunc(bytes.Split(env, []byte{0}), func(kv []byte) bool { return bytes.Equal(kv, want) }) {
			continue
		}
		if st, ok := readStat(pid); ok && !st.zombie {
			procs = append(procs, proc{pid: pid, start: st.start})
		}
	}
	return procs
}

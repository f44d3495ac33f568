package app

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
)

// simDesignWanted says whether GIT_CODEX_SIM_DESIGNS (a comma-separated
// list of simDesigns' names; empty: all) asks for the design.
func simDesignWanted(name string) bool {
	want := os.Getenv("GIT_CODEX_SIM_DESIGNS")
	if want == "" {
		return true
	}
	for _, w := range strings.Split(want, ",") {
		if strings.TrimSpace(w) == name {
			return true
		}
	}
	return false
}

// simDesignSpan is the span a design runs: its entry in
// GIT_CODEX_SIM_SPANS ("today=2d,retention=7d"), else GIT_CODEX_SIM_SPAN,
// else a day.
func simDesignSpan(tb testing.TB, name string) time.Duration {
	for _, kv := range strings.Split(os.Getenv("GIT_CODEX_SIM_SPANS"), ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k == name {
			return simSpan(tb, v, 24*time.Hour)
		}
	}
	return simSpan(tb, os.Getenv("GIT_CODEX_SIM_SPAN"), 24*time.Hour)
}

// simRetain is the retention design's window: GIT_CODEX_SIM_RETAIN (an
// archive older_than, e.g. "1d", "7d"), default a day, so that a run of a
// few days shows its effect.
func simRetain() string {
	if r := os.Getenv("GIT_CODEX_SIM_RETAIN"); r != "" {
		return r
	}
	return "1d"
}

// archive runs `git codex archive` on clone 0 as the person, then syncs
// every clone, so the archive and the smaller tip reach all of them.
func (s *teamSim) archive() {
	var out struct {
		Total int `json:"total"`
	}
	s.mustCall(0, simHuman, "", "archive", map[string]any{"older_than": s.cfg.Retain}, &out)
	if s.cfg.Measure {
		fmt.Fprintf(os.Stderr, "  archived %d records at %s\n", out.Total, s.elapsed())
	}
	for i := range s.clones {
		s.sync(i)
	}
}

// reportHistory prints, when GIT_CODEX_SIM_BYTES is set, what a fresh
// clone's fetch of origin's refs/codex/* is made of: the bytes git stores
// (objectsize:disk, deltas as packed) of the commits, and of the trees and
// blobs under each top-level directory of the state (mail, agents,
// tasks...), after `git repack -adf` of a copy of origin as a server's
// maintenance would do it. GIT_CODEX_SIM_KEEP copies origin there too
// (origin-<elapsed>.git, a mirror), and clone 0 (clone0-<elapsed>).
func (s *teamSim) reportHistory(elapsed time.Duration) {
	if keep := os.Getenv("GIT_CODEX_SIM_KEEP"); keep != "" {
		dst := filepath.Join(keep, fmt.Sprintf("origin-%s.git", strings.ReplaceAll(elapsed.String(), "0m0s", "")))
		os.RemoveAll(dst)
		s.gitOut(s.root, "clone", "-q", "--mirror", s.origin, dst)
		// clone 0 as it is, its reads refs and folds with it: what a
		// machine's own views read, which origin never holds
		c0 := filepath.Join(keep, fmt.Sprintf("clone0-%s", strings.ReplaceAll(elapsed.String(), "0m0s", "")))
		os.RemoveAll(c0)
		if out, err := exec.Command("cp", "-a", s.clones[0].dir, c0).CombinedOutput(); err != nil {
			s.tb.Fatalf("keep clone 0: %v\n%s", err, out)
		}
	}
	if os.Getenv("GIT_CODEX_SIM_BYTES") == "" {
		return
	}
	for _, mode := range []string{"as stored", "repacked"} {
		dir := s.origin
		if mode == "repacked" {
			dir = filepath.Join(s.root, "bytes.git")
			os.RemoveAll(dir)
			s.gitOut(s.root, "clone", "-q", "--mirror", s.origin, dir)
			s.gitOut(dir, "repack", "-adfq", "--window=50", "--depth=50")
		}
		by := historyBytes(s, dir)
		keys := make([]string, 0, len(by))
		var total int64
		for k, v := range by {
			keys = append(keys, k)
			total += v
		}
		sort.Slice(keys, func(i, j int) bool { return by[keys[i]] > by[keys[j]] })
		fmt.Fprintf(os.Stderr, "  history at %s (%s): %.2f MB", elapsed, mode, float64(total)/(1<<20))
		for _, k := range keys {
			fmt.Fprintf(os.Stderr, "; %s %.2f MB", k, float64(by[k])/(1<<20))
		}
		fmt.Fprintln(os.Stderr)
	}
}

// historyBytes attributes the objects reachable from dir's refs/codex/*
// to "commits", "<dir> trees", "<dir> blobs" and "root trees".
func historyBytes(s *teamSim, dir string) map[string]int64 {
	list := exec.Command("git", "rev-list", "--objects", "--glob=refs/codex/*")
	list.Dir = dir
	objs, err := list.Output()
	if err != nil {
		s.tb.Fatal(err)
	}
	names := map[string]string{}
	var ids bytes.Buffer
	for _, line := range strings.Split(string(objs), "\n") {
		id, path, _ := strings.Cut(line, " ")
		if id == "" {
			continue
		}
		names[id] = path
		ids.WriteString(id + "\n")
	}
	check := exec.Command("git", "cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize:disk)")
	check.Dir = dir
	check.Stdin = &ids
	out, err := check.Output()
	if err != nil {
		s.tb.Fatal(err)
	}
	by := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			continue
		}
		n, _ := strconv.ParseInt(f[2], 10, 64)
		path := names[f[0]]
		top, _, _ := strings.Cut(path, "/")
		switch {
		case f[1] == "commit":
			by["commits"] += n
		case path == "":
			by["root trees"] += n
		default:
			by[top+" "+f[1]+"s"] += n
		}
	}
	return by
}

// retainTicks is how many ticks apart the archives run.
func (s *teamSim) retainTicks() int {
	every := s.cfg.RetainEvery
	if every <= 0 {
		every = 24 * time.Hour
	}
	return max(1, int(every/simTick))
}

// keptDeleted counts the merges in dir's state history that kept records
// one side had deleted: no tool deletes a kept record, and records one
// side archived must not come back, so there should be none.
func (s *teamSim) keptDeleted(dir string) int {
	out := s.gitOut(dir, "log", "--format=%s", "--grep=kept that one side deleted", gitstate.RefState)
	if out == "" {
		return 0
	}
	return len(strings.Split(out, "\n"))
}

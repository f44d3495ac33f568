package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/gitcodex/git-codex/ui"
)

// BenchmarkViewsOnAState measures the checkpoint figures of the team
// simulation (teamSim.measure's views: log, status, inbox in-process and
// as a process, a write, the web page's first page and ?at= a week back)
// on a clone the simulation kept (GIT_CODEX_SIM_KEEP's clone0-<elapsed>),
// named by GIT_CODEX_VIEWS_STATE: so one state, copied afresh for each
// run, is measured before and after a change (issue 27's "views on a long
// history", docs/PERFORMANCE.md). GIT_CODEX_VIEWS_BIN is the binary the
// processes run (default: built from this tree), GIT_CODEX_VIEWS_AGENT
// the agent whose inbox is read (default w00), GIT_CODEX_VIEWS_RUNS a
// multiple of the runs each figure takes (5, 21 in-process for the inbox,
// as the simulation). Skipped without a state.
func BenchmarkViewsOnAState(b *testing.B) {
	src := os.Getenv("GIT_CODEX_VIEWS_STATE")
	if src == "" {
		b.Skip("GIT_CODEX_VIEWS_STATE names no kept clone")
	}
	bin := os.Getenv("GIT_CODEX_VIEWS_BIN")
	if bin == "" {
		bin = buildBinary(b)
	}
	agent := os.Getenv("GIT_CODEX_VIEWS_AGENT")
	if agent == "" {
		agent = "w00"
	}
	dir := filepath.Join(b.TempDir(), "clone")
	if out, err := exec.Command("cp", "-a", src, dir).CombinedOutput(); err != nil {
		b.Fatalf("copy %s: %v\n%s", src, err, out)
	}
	// the copy is the kept clone's machine still (gitstate's machine id
	// is tied to the git dir's place; without its place files it keeps
	// the id): its reads extend that machine's chains, as the
	// simulation's did
	places, _ := filepath.Glob(filepath.Join(dir, ".git", "codex", "machine.at.*"))
	for _, p := range places {
		if err := os.Remove(p); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time (user and system, the processes' and their git
	// children's) beside the wall clock: on a machine whose load changes
	// from one run to the next it is the figure that compares
	var cpu time.Duration
	proc := func(caller string, args ...string) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = benchEnv()
		if caller != "" {
			cmd.Env = append(cmd.Env, "CODEX_INSTANCE="+caller)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git-codex %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	selfCPU := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	// figure times n runs of fn (GIT_CODEX_VIEWS_RUNS times as many):
	// the median wall clock, and the mean CPU
	runs := 1
	if v := os.Getenv("GIT_CODEX_VIEWS_RUNS"); v != "" {
		fmt.Sscan(v, &runs)
	}
	figure := func(n int, inProcess bool, fn func()) (wall, meanCPU time.Duration) {
		n *= runs
		cpu = 0
		before := selfCPU()
		wall = median(n, fn)
		if inProcess {
			cpu = selfCPU() - before
		}
		return wall, cpu / time.Duration(n)
	}
	var f, c simFigures
	f.Log, c.Log = figure(5, false, func() { proc("", "log") })
	f.Status, c.Status = figure(5, false, func() { proc("", "status") })
	f.InboxProcess, c.InboxProcess = figure(5, false, func() { proc(agent, "mail", "inbox") })
	f.Write, c.Write = figure(5, false, func() {
		proc(agent, "call", "mail_send", `{"to":"s00","subject":"measured","body":"a write as a process"}`)
	})

	// in-process, on the simulation's clock: a minute past the tip, so
	// reads extend the day's reads chain as the team's did
	ctx := context.Background()
	probe, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var tip time.Time
	if err := probe.View(ctx, func(sn *gitstate.Snapshot) error { tip = sn.Time(); return nil }); err != nil {
		b.Fatal(err)
	}
	probe.Close()
	now := tip.Add(time.Minute)
	st, err := gitstate.Open(dir, gitstate.Options{Now: func() time.Time { now = now.Add(time.Millisecond); return now }})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	reg := builtin.Registry()
	// the first call of a process reads every directory; the ones after,
	// only what changed (gitstate.Reduce): both are said
	began := time.Now()
	if r := reg.CallAs(ctx, st, tools.Origin{ID: agent}, "mail_list_inbox", json.RawMessage(`{}`)); !r.OK {
		b.Fatal(r.Error)
	}
	inboxFirst := time.Since(began)
	f.Inbox, c.Inbox = figure(21, true, func() {
		if r := reg.CallAs(ctx, st, tools.Origin{ID: agent}, "mail_list_inbox", json.RawMessage(`{}`)); !r.OK {
			b.Fatal(r.Error)
		}
	})
	srv, err := ui.New(ui.Options{Store: st, Registry: reg, Caller: simHuman})
	if err != nil {
		b.Fatal(err)
	}
	h := srv.Handler()
	get := func(path string) {
		req := httptest.NewRequestWithContext(ctx, "GET", path, nil)
		req.Host = "127.0.0.1"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
	}
	began = time.Now()
	get("/api/state")
	stateFirst := time.Since(began)
	f.WebFirst, c.WebFirst = figure(5, true, func() {
		get("/")
		get("/api/state")
		get("/api/events?limit=50")
	})
	// a week back, or, in a shorter history, its first hour (after the
	// team was set up), as the simulation takes it
	back := tip.Add(-7 * 24 * time.Hour)
	out, err := exec.Command("git", "-C", dir, "log", "--max-parents=0", "--format=%ct", gitstate.RefState).Output()
	if err != nil {
		b.Fatal(err)
	}
	var root int64
	fmt.Sscan(string(out), &root)
	if start := time.Unix(root, 0); back.Before(start.Add(time.Hour)) {
		back = start.Add(time.Hour)
	}
	at := url.QueryEscape(back.UTC().Format(time.RFC3339))
	f.WebAtWeek, c.WebAtWeek = figure(5, true, func() {
		get("/api/state?at=" + at)
		get("/api/events?limit=50&at=" + at)
	})
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }
	row := func(f simFigures) string {
		return strings.Join([]string{ms(f.Log), ms(f.Status), ms(f.Inbox), ms(f.InboxProcess), ms(f.Write), ms(f.WebFirst), ms(f.WebAtWeek)}, "\t")
	}
	fmt.Fprintf(os.Stderr, "state=%s bin=%s load=%s\n\tlog\tstatus\tinbox\tinbox-proc\twrite\tweb\tweb-at-week\nwall\t%s\ncpu\t%s\nfirst of the process (wall): inbox %s, /api/state %s\n",
		src, bin, loadAverage(), row(f), row(c), ms(inboxFirst), ms(stateFirst))
}

// BenchmarkCallsOnAState is the team's calls in-process on a kept clone
// (GIT_CODEX_VIEWS_STATE, copied): each op is a round of the twenty
// agents' polls (mail_list_inbox) and one mail_send, on the simulation's
// clock, 30 s a round from a minute past the tip. It shows whether a
// call's cost grows with the history the clone holds.
func BenchmarkCallsOnAState(b *testing.B) {
	src := os.Getenv("GIT_CODEX_VIEWS_STATE")
	if src == "" {
		b.Skip("GIT_CODEX_VIEWS_STATE names no kept clone")
	}
	dir := filepath.Join(b.TempDir(), "clone")
	if out, err := exec.Command("cp", "-a", src, dir).CombinedOutput(); err != nil {
		b.Fatalf("copy %s: %v\n%s", src, err, out)
	}
	places, _ := filepath.Glob(filepath.Join(dir, ".git", "codex", "machine.at.*"))
	for _, p := range places {
		os.Remove(p)
	}
	ctx := context.Background()
	probe, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var tip time.Time
	if err := probe.View(ctx, func(sn *gitstate.Snapshot) error { tip = sn.Time(); return nil }); err != nil {
		b.Fatal(err)
	}
	probe.Close()
	now := tip.Add(time.Minute)
	st, err := gitstate.Open(dir, gitstate.Options{Now: func() time.Time { now = now.Add(time.Millisecond); return now }})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	reg := builtin.Registry()
	var agents []string
	for i := 0; i < 16; i++ {
		agents = append(agents, fmt.Sprintf("w%02d", i))
	}
	for i := 0; i < 4; i++ {
		agents = append(agents, fmt.Sprintf("s%02d", i))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now = now.Add(30 * time.Second)
		for _, a := range agents {
			if r := reg.CallAs(ctx, st, tools.Origin{ID: a}, "mail_list_inbox", json.RawMessage(`{}`)); !r.OK {
				b.Fatal(r.Error)
			}
		}
		if r := reg.CallAs(ctx, st, tools.Origin{ID: agents[i%len(agents)]}, "mail_send", json.RawMessage(`{"to":"s00","subject":"measured","body":"a write"}`)); !r.OK {
			b.Fatal(r.Error)
		}
	}
}

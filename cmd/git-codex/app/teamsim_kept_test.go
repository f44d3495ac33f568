package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/gitcodex/git-codex/ui"
)

// BenchmarkTeamMonthKept measures again the states a simulation kept
// (GIT_CODEX_SIM_KEEP=<dir>: clone0-<elapsed> and origin-<elapsed>.git at
// every checkpoint), with this tree's binary and at this machine's load:
// GIT_CODEX_SIM_KEPT=<dir>, and GIT_CODEX_SIM_KEPT_AT="168h,336h" for some
// checkpoints only; GIT_CODEX_SIM_KEPT_SYNCS the runs of each sync
// measured (3: the default first sync and the day-behind one, medians of
// wall and CPU). A month's simulation runs for hours beside whatever
// else the machine does, so its own figures are read at that load; these
// are taken when the machine is quiet, each process figure in alternation
// with an empty state (the same commands, the same binary), so that the
// ratio is read from rounds made at the same load. Every copy is made in
// a temporary directory: the kept states are never written.
func BenchmarkTeamMonthKept(b *testing.B) {
	kept := os.Getenv("GIT_CODEX_SIM_KEPT")
	if kept == "" {
		b.Skip("GIT_CODEX_SIM_KEPT=<a directory a simulation kept its checkpoints in (GIT_CODEX_SIM_KEEP)>")
	}
	all := keptCheckpoints(b, kept)
	points := slices.Clone(all)
	if at := os.Getenv("GIT_CODEX_SIM_KEPT_AT"); at != "" {
		var want []time.Duration
		for _, s := range strings.Split(at, ",") {
			want = append(want, simSpan(b, strings.TrimSpace(s), 0))
		}
		points = slices.DeleteFunc(points, func(p time.Duration) bool { return !slices.Contains(want, p) })
	}
	bin := buildBinary(b)
	empty := newKeptMeasure(b, bin, "")
	fmt.Fprintf(os.Stderr, "kept=%s window=%s\n%s\n", kept, simWindow(b), keptHeader)
	for _, p := range points {
		var prev string
		if i := slices.Index(all, p); i > 0 {
			prev = keptName(kept, "clone0-", all[i-1], "")
		}
		m := newKeptMeasure(b, bin, keptName(kept, "clone0-", p, ""))
		f := m.figures(kept, p, prev, empty)
		fmt.Fprintln(os.Stderr, f.row())
	}
}

// keptHeader names keptFigures.row's columns: each process figure is the
// kept state's median, the empty state's median in the same rounds, and
// their ratio.
const keptHeader = "simulated\tstate-commits\trecords\tfetch-MB\tfetch\tfirst-sync\tshallow-MB\tshallow-fetch\tshallow-sync\tday-sync\tlog\tstatus\tinbox\tinbox-proc\twrite\tweb\tweb-at-week\tweb-cold\tweb-at-week-cold\tgc\tload"

// keptFigures is one kept checkpoint measured again.
type keptFigures struct {
	Elapsed                          time.Duration
	StateCommits, Records            int
	FetchBytes, ShallowBytes         int64
	Fetch, FirstSync                 time.Duration
	ShallowFetch, GC                 time.Duration
	ShallowSync, DaySync             cpuPair       // medians of keptSyncs runs, each on a fresh copy
	Inbox, EmptyInbox                time.Duration // in-process, its audit record included
	Log, Status, InboxProcess, Write pair          // processes, against the empty state
	WebFirst, WebAtWeek              time.Duration
	WebFirstCold, WebAtWeekCold      time.Duration // a fresh store's first views, no kept parts (webCold)
	Load                             string
}

// pair is a figure on a kept state and the same on the empty state,
// medians of rounds that alternate between the two: wall time, and for
// processes their CPU (user and system), which a loaded machine swells
// less than the wall.
type pair struct{ kept, empty, keptCPU, emptyCPU time.Duration }

func (p pair) String() string {
	s := fmt.Sprintf("%s/%s=x%.2f", keptMs(p.kept), keptMs(p.empty), float64(p.kept)/float64(p.empty))
	if p.keptCPU > 0 && p.emptyCPU > 0 {
		s += fmt.Sprintf("(cpu %s/%s=x%.2f)", keptMs(p.keptCPU), keptMs(p.emptyCPU), float64(p.keptCPU)/float64(p.emptyCPU))
	}
	return s
}

func keptMs(d time.Duration) string {
	return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
}

func (f keptFigures) row() string {
	mb := func(n int64) string { return fmt.Sprintf("%.2f", float64(n)/(1<<20)) }
	day := "-"
	if f.DaySync.wall > 0 {
		day = f.DaySync.String()
	}
	return strings.Join([]string{f.Elapsed.String(), fmt.Sprint(f.StateCommits), fmt.Sprint(f.Records),
		mb(f.FetchBytes), keptMs(f.Fetch), keptMs(f.FirstSync), mb(f.ShallowBytes), keptMs(f.ShallowFetch), f.ShallowSync.String(), day,
		f.Log.String(), f.Status.String(), pair{kept: f.Inbox, empty: f.EmptyInbox}.String(), f.InboxProcess.String(), f.Write.String(),
		keptMs(f.WebFirst), keptMs(f.WebAtWeek), keptMs(f.WebFirstCold), keptMs(f.WebAtWeekCold), keptMs(f.GC), f.Load}, "\t")
}

// keptCheckpoints lists the checkpoints kept in dir that have both clone
// 0 and origin, oldest first.
func keptCheckpoints(tb testing.TB, dir string) []time.Duration {
	origins, err := filepath.Glob(filepath.Join(dir, "origin-*.git"))
	if err != nil {
		tb.Fatal(err)
	}
	var points []time.Duration
	for _, o := range origins {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(o), "origin-"), ".git")
		d, err := time.ParseDuration(name)
		if err != nil {
			continue
		}
		if _, err := os.Stat(keptName(dir, "clone0-", d, "")); err == nil {
			points = append(points, d)
		}
	}
	slices.Sort(points)
	if len(points) == 0 {
		tb.Fatalf("%s: no clone0-<elapsed> and origin-<elapsed>.git kept there", dir)
	}
	return points
}

// keptName is how reportHistory names a kept checkpoint ("24h", "0s").
func keptName(dir, prefix string, elapsed time.Duration, suffix string) string {
	return filepath.Join(dir, prefix+strings.ReplaceAll(elapsed.String(), "0m0s", "")+suffix)
}

// keptMeasure is a copy of a kept clone 0 (or an empty state) with an
// agent whose token this run knows: s00, a supervisor the simulated
// workers mail, its token rotated in the copy (the simulation never
// keeps tokens).
type keptMeasure struct {
	tb    testing.TB
	bin   string
	dir   string
	token string
	st    *gitstate.Store
	reg   *tools.Registry
	cpu   time.Duration // the CPU of the processes run, summed
}

const keptAgent = "s00"

// newKeptMeasure copies clone (or makes an empty state, for "") into a
// temporary directory and gives s00 a token there.
func newKeptMeasure(tb testing.TB, bin, clone string) *keptMeasure {
	m := &keptMeasure{tb: tb, bin: bin, dir: filepath.Join(tb.TempDir(), "clone"), reg: builtin.Registry()}
	if clone == "" {
		gitstatetest.Git(tb, filepath.Dir(m.dir), "init", "-q", m.dir)
		simConfigRepo(tb, m.dir)
		m.run(nil, "", "init")
		m.run(nil, "", "agent", "add", keptAgent, "--type", "supervisor")
		m.run(nil, "", "agent", "add", "w00", "--type", "worker")
	} else {
		keptCopy(tb, clone, m.dir)
	}
	var out struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(m.runOut(nil, "agent", "rotate-token", "--json", keptAgent)), &out); err != nil || out.Token == "" {
		tb.Fatalf("rotate-token %s: %v (%+v)", keptAgent, err, out)
	}
	m.token = out.Token
	st, err := gitstate.Open(m.dir, gitstate.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close(); gitstatetest.WaitForMaintenance(tb, m.dir) })
	m.st = st
	return m
}

// keptCopy copies a kept repository whole (cp -a: its packs, reads refs
// and local config as they were).
func keptCopy(tb testing.TB, src, dst string) {
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		tb.Fatalf("copy %s: %v\n%s", src, err, out)
	}
}

// run runs the binary in the copy as the person, or as s00 when env is
// non-nil (then with its token), and fails the benchmark if it fails.
func (m *keptMeasure) run(env []string, dir string, args ...string) string {
	m.tb.Helper()
	if dir == "" {
		dir = m.dir
	}
	cmd := exec.Command(m.bin, args...)
	cmd.Dir = dir
	cmd.Env = append(benchEnv(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		m.tb.Fatalf("git-codex %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	m.cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return string(out)
}

// runOut is run's standard output alone, for what is parsed.
func (m *keptMeasure) runOut(env []string, args ...string) string {
	m.tb.Helper()
	cmd := exec.Command(m.bin, args...)
	cmd.Dir = m.dir
	cmd.Env = append(benchEnv(), env...)
	out, err := cmd.Output()
	if err != nil {
		m.tb.Fatalf("git-codex %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

func (m *keptMeasure) asAgent() []string {
	return []string{"CODEX_INSTANCE=" + keptAgent, "CODEX_TOKEN=" + m.token}
}

// cpuPair is a process's wall time and CPU (user and system, its
// children's included), medians of the runs taken.
// grew is what the sync added to the repository's objects (the last
// run's): what it fetched, as git stored it.
type cpuPair struct {
	wall, cpu time.Duration
	grew      int64
}

func (p cpuPair) String() string {
	return fmt.Sprintf("%s(cpu %s, +%.2fMB)", keptMs(p.wall), keptMs(p.cpu), float64(p.grew)/(1<<20))
}

// keptSyncs is how many times the syncs are measured, each on a fresh
// copy (GIT_CODEX_SIM_KEPT_SYNCS; 3 by default).
func keptSyncs(tb testing.TB) int {
	n := 3
	if v := os.Getenv("GIT_CODEX_SIM_KEPT_SYNCS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			tb.Fatalf("GIT_CODEX_SIM_KEPT_SYNCS=%q: a count", v)
		}
	}
	return n
}

// syncs runs `git codex sync -q origin` keptSyncs times in the repository
// setup makes (afresh each time; it is removed after) and returns the
// medians.
func (m *keptMeasure) syncs(setup func() string) cpuPair {
	var walls, cpus []time.Duration
	var grew int64
	for range keptSyncs(m.tb) {
		dir := setup()
		objects := filepath.Join(dir, ".git", "objects")
		before := dirSize(objects)
		start, cpu := time.Now(), m.cpu
		m.run(nil, dir, "sync", "-q", "origin")
		walls, cpus = append(walls, time.Since(start)), append(cpus, m.cpu-cpu)
		gitstatetest.WaitForMaintenance(m.tb, dir)
		grew = dirSize(objects) - before
		os.RemoveAll(dir)
	}
	mid := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	return cpuPair{mid(walls), mid(cpus), grew}
}

// keptRounds is how many alternating rounds each process figure takes.
const keptRounds = 9

// alternate runs fn on the kept copy and on the empty one in turn and
// returns both medians.
func alternate(m, empty *keptMeasure, fn func(*keptMeasure)) pair {
	var k, e, kc, ec []time.Duration
	for range keptRounds {
		for _, x := range []*keptMeasure{m, empty} {
			start, cpu := time.Now(), x.cpu
			fn(x)
			d, c := time.Since(start), x.cpu-cpu
			if x == m {
				k, kc = append(k, d), append(kc, c)
			} else {
				e, ec = append(e, d), append(ec, c)
			}
		}
	}
	mid := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	return pair{mid(k), mid(e), mid(kc), mid(ec)}
}

// figures measures the checkpoint p; prev is clone 0 at the checkpoint
// before ("" for the first), which a day-behind sync brings up to p.
func (m *keptMeasure) figures(kept string, p time.Duration, prev string, empty *keptMeasure) keptFigures {
	tb := m.tb
	f := keptFigures{Elapsed: p, Load: loadAverage()}
	root := tb.TempDir()
	origin := filepath.Join(root, "origin.git")
	keptCopy(tb, keptName(kept, "origin-", p, ".git"), origin)
	f.StateCommits = keptCount(tb, origin, gitstate.RefState)

	// A fresh clone: what it fetches of refs/codex/*, its whole first
	// sync, then the same over the default window (as measure does).
	fresh := filepath.Join(root, "fresh")
	gitstatetest.Git(tb, root, "init", "-q", fresh)
	start := time.Now()
	gitstatetest.Git(tb, fresh, "fetch", "-q", origin, "+refs/codex/*:refs/codex/*", "+refs/notes/codex*:refs/notes/codex*")
	f.Fetch = time.Since(start)
	f.FetchBytes = dirSize(filepath.Join(fresh, ".git", "objects"))
	os.RemoveAll(fresh)
	gitstatetest.Git(tb, root, "clone", "-q", "--no-local", origin, fresh)
	simConfigRepo(tb, fresh)
	gitstatetest.Git(tb, fresh, "config", "codex.firstSyncDays", "0")
	start = time.Now()
	m.run(nil, fresh, "sync", "-q", "origin")
	f.FirstSync = time.Since(start)
	gitstatetest.WaitForMaintenance(tb, fresh)
	os.RemoveAll(fresh)
	gitstatetest.Git(tb, root, "clone", "-q", "--no-local", origin, fresh)
	simConfigRepo(tb, fresh)
	gitstatetest.Git(tb, fresh, "config", "codex.firstSyncDays", strconv.FormatFloat(simWindow(tb).Hours()/24, 'f', 6, 64))
	start = time.Now()
	gitstatetest.Git(tb, fresh, "fetch", "-q", "--shallow-since=@"+keptShallowSince(tb, origin), origin, "+refs/codex/state:refs/codex/state")
	gitstatetest.Git(tb, fresh, "fetch", "-q", origin, "+refs/codex/archive/*:refs/codex/archive/*", "+refs/notes/codex*:refs/notes/codex*")
	f.ShallowFetch = time.Since(start)
	f.ShallowBytes = dirSize(filepath.Join(fresh, ".git", "objects"))
	os.RemoveAll(fresh)
	f.ShallowSync = m.syncs(func() string {
		gitstatetest.Git(tb, root, "clone", "-q", "--no-local", origin, fresh)
		simConfigRepo(tb, fresh)
		gitstatetest.Git(tb, fresh, "config", "codex.firstSyncDays", strconv.FormatFloat(simWindow(tb).Hours()/24, 'f', 6, 64))
		return fresh
	})

	// The day-behind sync: clone 0 as it was a checkpoint ago, synced
	// with origin as it is now.
	if prev != "" {
		lag := filepath.Join(root, "laggard")
		f.DaySync = m.syncs(func() string {
			keptCopy(tb, prev, lag)
			gitstatetest.Git(tb, lag, "remote", "set-url", "origin", origin)
			return lag
		})
	}

	f.Log = alternate(m, empty, func(x *keptMeasure) { x.run(nil, "", "log") })
	f.Status = alternate(m, empty, func(x *keptMeasure) { x.run(nil, "", "status") })
	f.InboxProcess = alternate(m, empty, func(x *keptMeasure) { x.run(x.asAgent(), "", "mail", "inbox") })
	f.Write = alternate(m, empty, func(x *keptMeasure) {
		x.run(x.asAgent(), "", "call", "mail_send", `{"to":"w00","subject":"measured","body":"a write as a process"}`)
	})
	inbox := alternate(m, empty, func(x *keptMeasure) {
		// in-process, as the MCP server runs it: 21 calls a round
		for range 21 {
			if r := x.reg.CallAs(context.Background(), x.st, tools.Origin{ID: keptAgent, Token: x.token}, "mail_list_inbox", []byte(`{}`)); !r.OK {
				tb.Fatalf("mail_list_inbox: %+v", r)
			}
		}
	})
	f.Inbox, f.EmptyInbox = inbox.kept/21, inbox.empty/21 // in-process: no CPU of its own
	f.WebFirst, f.WebAtWeek = m.web(p)
	f.WebFirstCold, f.WebAtWeekCold = m.webCold(p)
	f.Records = m.records()

	gitstatetest.WaitForMaintenance(tb, m.dir) // git refuses a second gc
	start = time.Now()
	gitstatetest.Git(tb, m.dir, "gc", "-q")
	f.GC = time.Since(start)
	return f
}

// keptShallowSince is the start of the default window before origin's
// tip, in seconds since the epoch.
func keptShallowSince(tb testing.TB, origin string) string {
	tip, err := strconv.ParseInt(strings.TrimSpace(gitstatetest.Git(tb, origin, "log", "-1", "--format=%ct", gitstate.RefState)), 10, 64)
	if err != nil {
		tb.Fatal(err)
	}
	return strconv.FormatInt(time.Unix(tip, 0).Add(-simWindow(tb)).Unix(), 10)
}

// keptCount counts the commits of ref in dir.
func keptCount(tb testing.TB, dir, ref string) int {
	n, err := strconv.Atoi(strings.TrimSpace(gitstatetest.Git(tb, dir, "rev-list", "--count", ref)))
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// web times the page's first page and its view a week back (the first
// hour when the run is shorter), as measureWeb does, through the
// handler of one server (warm after its first request, as a person's
// page is; a fresh server's first request is the first round).
func (m *keptMeasure) web(elapsed time.Duration) (first, atWeek time.Duration) {
	get := m.page(m.st)
	first = median(5, func() {
		get("/")
		get("/api/state")
		get("/api/events?limit=50")
	})
	at := m.weekBack(elapsed)
	atWeek = median(5, func() {
		get("/api/state?at=" + at)
		get("/api/events?limit=50&at=" + at)
	})
	return first, atWeek
}

// webCold is the page as the first person to open it on a fresh clone
// finds it: a store opened anew on the copy, with none of the parts of
// past views that pages and status kept in codex/reduced (a clone has
// none), then the first page and the first ?at= a week back, each timed
// once; the median of three such first visits. web's figures are medians
// of five views in one store, the first of which pays what these pay.
func (m *keptMeasure) webCold(elapsed time.Duration) (first, atWeek time.Duration) {
	at := m.weekBack(elapsed)
	var firsts, ats []time.Duration
	for range 3 {
		if err := os.RemoveAll(filepath.Join(m.dir, ".git", "codex", "reduced")); err != nil {
			m.tb.Fatal(err)
		}
		st, err := gitstate.Open(m.dir, gitstate.Options{})
		if err != nil {
			m.tb.Fatal(err)
		}
		get := m.page(st)
		start := time.Now()
		get("/")
		get("/api/state")
		get("/api/events?limit=50")
		firsts = append(firsts, time.Since(start))
		start = time.Now()
		get("/api/state?at=" + at)
		get("/api/events?limit=50&at=" + at)
		ats = append(ats, time.Since(start))
		st.Close()
	}
	mid := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	return mid(firsts), mid(ats)
}

// page returns a GET of the web page served from st, failing the
// benchmark on any answer but 200.
func (m *keptMeasure) page(st *gitstate.Store) func(path string) {
	srv, err := ui.New(ui.Options{Store: st, Registry: m.reg, Caller: simHuman})
	if err != nil {
		m.tb.Fatal(err)
	}
	h := srv.Handler()
	return func(path string) {
		req := httptest.NewRequestWithContext(context.Background(), "GET", path, nil)
		req.Host = "127.0.0.1"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			body, _ := io.ReadAll(rec.Body)
			m.tb.Fatalf("%s: %d %s", path, rec.Code, body)
		}
	}
}

// weekBack is the ?at= value a week before the checkpoint elapsed (or an
// hour after the simulation's start, for the first week), escaped.
func (m *keptMeasure) weekBack(elapsed time.Duration) string {
	// the simulation's start: its first commit on the state
	roots := strings.Fields(gitstatetest.Git(m.tb, m.dir, "log", "--format=%ct", "--max-parents=0", gitstate.RefState))
	if len(roots) == 0 {
		m.tb.Fatalf("%s: no first commit on %s", m.dir, gitstate.RefState)
	}
	startAt, err := strconv.ParseInt(roots[len(roots)-1], 10, 64)
	if err != nil {
		m.tb.Fatal(err)
	}
	back := elapsed - 7*24*time.Hour
	if back < time.Hour {
		back = time.Hour
	}
	when := time.Unix(startAt, 0).Add(back)
	return url.QueryEscape(when.UTC().Format(time.RFC3339))
}

// records counts the records of the live tree at the tip.
func (m *keptMeasure) records() int {
	n := 0
	err := m.st.View(context.Background(), func(sn *gitstate.Snapshot) error {
		return sn.Walk("", func(string, []byte) error { n++; return nil })
	})
	if err != nil {
		m.tb.Fatal(err)
	}
	return n
}

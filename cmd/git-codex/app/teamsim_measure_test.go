package app

import (
	"context"
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
	"github.com/gitcodex/git-codex/ui"
)

// simFigures are what a checkpoint measures: the list, each for
// the design the simulation runs.
type simFigures struct {
	Elapsed      time.Duration // simulated time so far
	Calls        int           // tool calls the team made
	StateCommits int           // commits on origin's refs/codex/state: what every clone carries
	LocalReads   int           // commits on clone 0's refs/codex/reads/*: what stays on its machine
	FetchBytes   int64         // objects a fresh clone fetches of origin's refs/codex/*, as git stores them
	Fetch        time.Duration // that fetch (git fetch, a process)
	FirstSync    time.Duration // `git codex sync` of a fresh clone, a process (codex.firstSyncDays=0: the whole history)
	// ShallowBytes, ShallowFetch and ShallowSync are the same for a
	// fresh clone whose first sync fetches the last simWindow of the
	// state's history (codex.firstSyncDays, the default being 1 day).
	ShallowBytes  int64
	ArchiveBytes  int64 // of ShallowBytes, what the archives brought that the window had not (they come whole)
	ArchivesAlone int64 // what a fetch of origin's refs/codex/archive/* alone stores: what they bring once the window no longer holds their records
	ShallowFetch  time.Duration
	ShallowSync   time.Duration
	DaySync       time.Duration // `git codex sync` of a clone last synced at the previous checkpoint
	Log           time.Duration // `git codex log` (50 events), a process; median of 5
	Status        time.Duration // `git codex status`, a process; median of 5
	Inbox         time.Duration // mail_list_inbox in-process, its audit record included; median of 21
	InboxProcess  time.Duration // `git codex mail inbox`, a process; median of 5
	Write         time.Duration // `git codex mail send`, a process; median of 5
	WebFirst      time.Duration // the page, /api/state and 50 events; median of 5
	WebAtWeek     time.Duration // /api/state and 50 events ?at= a week back (or the start); median of 5
	GC            time.Duration // `git gc` of clone 0, a process
	PackedBytes   int64         // clone 0's .git/objects after that gc
	StateTreeSize int           // records in the live tree at the tip
	Load          string        // the machine's load averages (1, 5, 15 min) when the checkpoint was taken
}

// header and row print figures as a table line.
func (f simFigures) header() string {
	return "simulated\tcalls\tstate-commits\tlocal-reads\tfetch-MB\tfetch\tfirst-sync\tshallow-MB\tshallow-fetch\tshallow-sync\tday-sync\tlog\tstatus\tinbox\tinbox-proc\twrite\tweb\tweb-at-week\tgc\tpacked-MB\trecords\tarchive-MB\tarchives-alone-MB\tload"
}

func (f simFigures) row() string {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }
	mb := func(n int64) string { return fmt.Sprintf("%.2f", float64(n)/(1<<20)) }
	return strings.Join([]string{f.Elapsed.String(), fmt.Sprint(f.Calls), fmt.Sprint(f.StateCommits), fmt.Sprint(f.LocalReads),
		mb(f.FetchBytes), ms(f.Fetch), ms(f.FirstSync), mb(f.ShallowBytes), ms(f.ShallowFetch), ms(f.ShallowSync), ms(f.DaySync), ms(f.Log), ms(f.Status), ms(f.Inbox), ms(f.InboxProcess),
		ms(f.Write), ms(f.WebFirst), ms(f.WebAtWeek), ms(f.GC), mb(f.PackedBytes), fmt.Sprint(f.StateTreeSize), mb(f.ArchiveBytes), mb(f.ArchivesAlone), f.Load}, "\t")
}

// median runs fn n times and returns the median duration.
func median(n int, fn func()) time.Duration {
	d := make([]time.Duration, n)
	for i := range d {
		start := time.Now()
		fn()
		d[i] = time.Since(start)
	}
	slices.Sort(d)
	return d[n/2]
}

// simProc runs the built binary in dir as caller (an agent id, or "" for
// the person) and fails the run if it fails.
func (s *teamSim) simProc(bin, dir, caller string, args ...string) string {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = benchEnv()
	if caller != "" {
		for _, a := range s.agents {
			if a.id == caller {
				cmd.Env = append(cmd.Env, "CODEX_INSTANCE="+a.id, "CODEX_TOKEN="+a.token)
			}
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.tb.Fatalf("git-codex %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// measure takes a checkpoint's figures. laggard is a clone last synced
// at the previous checkpoint (made at the start for the first); it is
// synced here, so it is the laggard of the next one.
func (s *teamSim) measure(bin, laggard string, elapsed time.Duration) simFigures {
	f := simFigures{Elapsed: elapsed, Calls: s.calls, Load: loadAverage()}
	c0 := s.clones[0]
	f.StateCommits = s.countCommits(s.origin, gitstate.RefState)
	f.LocalReads = s.countCommits(c0.dir, "refs/codex/reads/")

	// A fresh clone: what it fetches of refs/codex/*, then its first sync.
	fresh := filepath.Join(s.root, fmt.Sprintf("fresh-%d", elapsed/time.Second))
	s.gitOut(s.root, "init", "-q", fresh)
	start := time.Now()
	s.gitOut(fresh, "fetch", "-q", s.origin, "+refs/codex/*:refs/codex/*", "+refs/notes/codex*:refs/notes/codex*")
	f.Fetch = time.Since(start)
	f.FetchBytes = dirSize(filepath.Join(fresh, ".git", "objects"))
	os.RemoveAll(fresh)
	s.gitOut(s.root, "init", "-q", fresh)
	s.gitOut(fresh, "fetch", "-q", s.origin, "+refs/codex/archive/*:refs/codex/archive/*")
	f.ArchivesAlone = dirSize(filepath.Join(fresh, ".git", "objects"))
	os.RemoveAll(fresh)
	// --no-local: a clone from a path otherwise hard-links origin's packs,
	// refs/codex/* objects included, and the first sync then fetches
	// nothing (the 1-2 s "first-sync" of earlier runs measured that)
	s.gitOut(s.root, "clone", "-q", "--no-local", s.origin, fresh)
	simConfigRepo(s.tb, fresh)
	s.gitOut(fresh, "config", "codex.firstSyncDays", "0")
	start = time.Now()
	s.simProc(bin, fresh, "", "sync", "-q", "origin")
	f.FirstSync = time.Since(start)
	gitstatetest.WaitForMaintenance(s.tb, fresh)
	os.RemoveAll(fresh)
	f.ShallowBytes, f.ArchiveBytes, f.ShallowFetch, f.ShallowSync = s.measureShallow(bin, fresh)

	start = time.Now()
	s.simProc(bin, laggard, "", "sync", "-q", "origin")
	f.DaySync = time.Since(start)

	f.Log = median(5, func() { s.simProc(bin, c0.dir, "", "log") })
	f.Status = median(5, func() { s.simProc(bin, c0.dir, "", "status") })
	var agent *simAgent
	for _, a := range s.agents {
		if a.clone == 0 {
			agent = a
			break
		}
	}
	f.Inbox = median(21, func() { s.call(0, agent.id, agent.token, "mail_list_inbox", map[string]any{}, nil) })
	f.InboxProcess = median(5, func() { s.simProc(bin, c0.dir, agent.id, "mail", "inbox") })
	f.Write = median(5, func() {
		s.simProc(bin, c0.dir, agent.id, "call", "mail_send", `{"to":"s00","subject":"measured","body":"a write as a process"}`)
	})
	f.WebFirst, f.WebAtWeek = s.measureWeb(c0.st)
	f.StateTreeSize = s.records(c0.st)

	gitstatetest.WaitForMaintenance(s.tb, c0.dir) // git refuses a second gc
	start = time.Now()
	s.gitOut(c0.dir, "gc", "-q")
	f.GC = time.Since(start)
	f.PackedBytes = dirSize(filepath.Join(c0.dir, ".git", "objects"))
	s.reportHistory(elapsed)
	return f
}

// simWindow is how much of the state's history the shallow first sync
// of a fresh clone fetches in the simulation: GIT_CODEX_SIM_WINDOW ("1d",
// "12h"), by default git codex's own (gitstate.DefaultFirstSyncDays: 1 day).
func simWindow(tb testing.TB) time.Duration {
	return simSpan(tb, os.Getenv("GIT_CODEX_SIM_WINDOW"), gitstate.DefaultFirstSyncDays*24*time.Hour)
}

// loadAverage is /proc/loadavg's three averages: the figures of a shared
// machine are read beside it.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], "/")
}

// measureShallow is a fresh clone's shallow first sync, the last
// simWindow of the state's history: what git fetches for it (the state
// with --shallow-since, back from its newest commit; notes and archives
// whole, as sync fetches them), then the sync itself, a process.
func (s *teamSim) measureShallow(bin, dir string) (bytes, archives int64, fetch, sync time.Duration) {
	window := simWindow(s.tb)
	tip, err := strconv.ParseInt(s.gitOut(s.origin, "log", "-1", "--format=%ct", "refs/codex/state"), 10, 64)
	if err != nil {
		s.tb.Fatal(err)
	}
	since := time.Unix(tip, 0).Add(-window)
	s.gitOut(s.root, "init", "-q", dir)
	start := time.Now()
	s.gitOut(dir, "fetch", "-q", "--shallow-since=@"+strconv.FormatInt(since.Unix(), 10), s.origin, "+refs/codex/state:refs/codex/state")
	inWindow := dirSize(filepath.Join(dir, ".git", "objects"))
	s.gitOut(dir, "fetch", "-q", s.origin, "+refs/codex/archive/*:refs/codex/archive/*", "+refs/notes/codex*:refs/notes/codex*")
	fetch = time.Since(start)
	bytes = dirSize(filepath.Join(dir, ".git", "objects"))
	archives = bytes - inWindow
	os.RemoveAll(dir)
	s.gitOut(s.root, "clone", "-q", "--no-local", s.origin, dir) // (see measure)
	simConfigRepo(s.tb, dir)
	s.gitOut(dir, "config", "codex.firstSyncDays", strconv.FormatFloat(window.Hours()/24, 'f', 6, 64))
	start = time.Now()
	s.simProc(bin, dir, "", "sync", "-q", "origin")
	sync = time.Since(start)
	// a window as long as the run (a day at the first checkpoint, by default) fetches it all:
	// the commits at its edge are the team's setup, within the second
	if out := s.gitOut(dir, "rev-parse", "--is-shallow-repository"); strings.TrimSpace(out) != "true" && s.elapsed() > window+time.Minute {
		s.tb.Fatalf("the shallow first sync fetched the whole history (is-shallow-repository: %s; %s simulated, window %s)", out, s.elapsed(), window)
	}
	gitstatetest.WaitForMaintenance(s.tb, dir)
	os.RemoveAll(dir)
	return bytes, archives, fetch, sync
}

// measureWeb times the web page's first page and its view a week back
// (the start of the run when it is shorter), through the page's handler.
func (s *teamSim) measureWeb(st *gitstate.Store) (first, atWeek time.Duration) {
	srv, err := ui.New(ui.Options{Store: st, Registry: s.reg, Caller: simHuman})
	if err != nil {
		s.tb.Fatal(err)
	}
	h := srv.Handler()
	get := func(path string) {
		req := httptest.NewRequestWithContext(context.Background(), "GET", path, nil)
		req.Host = "127.0.0.1"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			body, _ := io.ReadAll(rec.Body)
			s.tb.Fatalf("%s: %d %s", path, rec.Code, body)
		}
	}
	first = median(5, func() {
		get("/")
		get("/api/state")
		get("/api/events?limit=50")
	})
	back := s.elapsed() - 7*24*time.Hour
	if back < time.Hour {
		back = time.Hour // the first hour's state: after the team was set up
	}
	at := url.QueryEscape(s.start.Add(back).Format(time.RFC3339))
	atWeek = median(5, func() {
		get("/api/state?at=" + at)
		get("/api/events?limit=50&at=" + at)
	})
	return first, atWeek
}

// records counts the records of the live tree at the tip.
func (s *teamSim) records(st *gitstate.Store) int {
	n := 0
	err := st.View(s.ctx, func(sn *gitstate.Snapshot) error {
		return sn.Walk("", func(string, []byte) error { n++; return nil })
	})
	if err != nil {
		s.tb.Fatal(err)
	}
	return n
}

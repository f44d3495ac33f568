package app

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
)

// A team simulation (issue 27): twenty agents on three clones of one
// repository, polling and working for simulated hours, days or weeks, so
// that what accumulates (history, packs, the live tree) is measured
// rather than guessed. Calls go in-process through the real registry and
// gitstate against real repositories — 2 million calls through processes
// would take days — with a simulated clock (gitstate.Options.Now), so a
// month of commits carries a month of timestamps. What people and agents
// wait for (log, status, sync, clone, gc) is measured as real processes
// of the built binary and of git. docs/PERFORMANCE.md says the mix and
// records the figures.

// simConfig is a simulation's size and shape.
type simConfig struct {
	// Span is the simulated time the team works.
	Span time.Duration
	// Checkpoints lists the simulated times (from the start) at which
	// the views are measured; the end always is.
	Checkpoints []time.Duration
	// Workers and Supervisors make the team (16 and 4: twenty agents).
	Workers, Supervisors int
	// Clones is the number of machines (clones of one bare origin); the
	// agents are spread over them.
	Clones int
	// SyncEvery is how often each clone runs `git codex sync origin`.
	SyncEvery time.Duration
	// ReadsOnState selects the design before issue 27: every read and
	// refusal is a commit on refs/codex/state (git config codex.reads=state).
	ReadsOnState bool
	// Measure says whether checkpoints measure the views (processes,
	// clones, gc); a test that only checks the design holds leaves it off.
	Measure bool
	// Retain, if set, is the older_than of a `git codex archive` run on
	// clone 0 every RetainEvery (default: at every simulated midnight)
	// (retention; "" never).
	Retain      string
	RetainEvery time.Duration
	// Origin is what maintenance origin gets: originPush (git's own after
	// every push, receive.autogc: gc --auto folds the pushed packs at 50)
	// or originForge (a repack after every sync round, as a forge runs one
	// after pushes: geometric, with a multi-pack bitmap). "" is originPush.
	Origin string
	// Seed makes the run repeatable.
	Seed uint64
}

// The mix, per agent and simulated hour (docs/PERFORMANCE.md): every
// agent polls its inbox every 30 s and its status every 5 min, reads each
// unread mail, and mails someone 4 times an hour. Workers claim a task
// about every 2 h (a claim that lost a race is refused ALREADY_CLAIMED),
// complete it after 1-3 h, and take and release a lock once an hour
// (refused LOCK_DENIED when taken). Supervisors create 2 tasks an hour
// each, look at the task list, and log a decision every 4 h.
const (
	simTick        = 30 * time.Second
	statusPerHour  = 12
	mailPerHour    = 4
	claimPerHour   = 0.5
	lockPerHour    = 1
	createPerHour  = 2
	listPerHour    = 1
	decidePerHour  = 0.25
	lockHold       = 10 * time.Minute
	simLockNames   = 5
	ticksPerHour   = float64(time.Hour / simTick)
	simHuman       = "human:sim@example.com"
	simStartOffset = 60 * 24 * time.Hour // the simulated start lies about this far before the real clock
)

// simStart is where a simulation's clock starts: noon UTC of the day
// simStartOffset before now. A fixed hour, not the real clock's: what a
// run does at a UTC midnight (a day's reads refs end and archive folds
// them) must not depend on when it runs — started at the real clock's
// hour, a simulated day begun between 00:00 and 01:00 UTC ended before
// its midnight's fold was due, and TestTeamSimulationHolds failed in CI.
func simStart(now time.Time) time.Time {
	return now.Add(-simStartOffset).UTC().Truncate(24 * time.Hour).Add(12 * time.Hour)
}

// teamSim is one running simulation.
type teamSim struct {
	tb     testing.TB
	cfg    simConfig
	ctx    context.Context
	reg    *tools.Registry
	pcg    *rand.PCG // rng's source, kept with a checkpoint to go on from (simResume)
	rng    *rand.Rand
	root   string
	origin string
	clones []*simClone
	agents []*simAgent
	// pending are the tasks created and not yet seen claimed: what an
	// agent picks from (its clone may know better, which makes races).
	pending []string

	mu    sync.Mutex // guards now: the stores' Now may be called from their goroutines
	start time.Time
	now   time.Time

	// base is the simulated time the team's setup took; tick the last
	// tick simulated, and order the agents' order in it (each tick
	// shuffles the last one's): where run goes on from
	base  time.Duration
	tick  int
	order []int

	calls   int            // tool calls made by the simulation
	byTool  map[string]int // calls per tool
	refused int            // calls answered with an error
	syncs   int
}

// simClone is one machine: a clone of origin and its store.
type simClone struct {
	dir string
	st  *gitstate.Store
}

// simAgent is one agent and what it is doing.
type simAgent struct {
	id, token string
	worker    bool
	clone     int
	task      string // held task
	taskDone  time.Time
	lock      string // held lock
	lockDone  time.Time
}

// newTeamSim makes origin, the clones and the team: the state is
// initialised on clone 0, the agents registered there, and the other
// clones join with a sync.
func newTeamSim(tb testing.TB, cfg simConfig) *teamSim {
	tb.Helper()
	s := &teamSim{tb: tb, cfg: cfg, ctx: context.Background(), reg: builtin.Registry(), pcg: rand.NewPCG(cfg.Seed, 27),
		root: tb.TempDir(), byTool: map[string]int{}}
	s.rng = rand.New(s.pcg)
	s.start = simStart(time.Now())
	s.now = s.start
	s.origin = filepath.Join(s.root, "origin.git")
	gitstatetest.Git(tb, s.root, "init", "-q", "--bare", s.origin)
	gitstatetest.Git(tb, s.origin, "config", "gc.autoDetach", "false") // nothing of origin's runs past a push
	if cfg.Origin == originForge {
		gitstatetest.Git(tb, s.origin, "config", "receive.autogc", "false") // the forge's own repack instead
	}
	for i := 0; i < cfg.Clones; i++ {
		dir := filepath.Join(s.root, fmt.Sprintf("clone%d", i))
		gitstatetest.Git(tb, s.root, "clone", "-q", s.origin, dir)
		simConfigRepo(tb, dir)
		if cfg.ReadsOnState {
			gitstatetest.Git(tb, dir, "config", "codex.reads", "state")
		}
		st, err := gitstate.Open(dir, gitstate.Options{Now: s.clock})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { st.Close() })
		s.clones = append(s.clones, &simClone{dir: dir, st: st})
	}
	tb.Cleanup(func() {
		for _, c := range s.clones {
			gitstatetest.WaitForMaintenance(tb, c.dir)
		}
	})
	if _, err := builtin.Registry().Init(s.ctx, s.clones[0].st, tools.Origin{ID: simHuman}); err != nil {
		tb.Fatal(err)
	}
	// the simulated workers complete their tasks without a review loop
	// (no agents run here to review them): without this every
	// COMPLETED was refused and tasks piled up open, ~1,350 at a week,
	// which no real team's status shows
	s.mustCall(0, simHuman, "", "config_set", map[string]any{"key": "task.allow_skip_review", "value": "on"}, nil)
	for i := 0; i < cfg.Workers+cfg.Supervisors; i++ {
		a := &simAgent{id: fmt.Sprintf("w%02d", i), worker: true, clone: i % cfg.Clones}
		typ := "worker"
		if i >= cfg.Workers {
			a.id, a.worker, typ = fmt.Sprintf("s%02d", i-cfg.Workers), false, "supervisor"
		}
		var out struct {
			Token string `json:"token"`
		}
		s.mustCall(0, simHuman, "", "agent_register", map[string]any{"id": a.id, "type": typ}, &out)
		a.token = out.Token
		s.agents = append(s.agents, a)
	}
	for i := range s.clones {
		s.sync(i)
	}
	s.base = s.elapsed()
	for i := range s.agents {
		s.order = append(s.order, i)
	}
	return s
}

// simConfigRepo sets what a long simulation needs of a clone: no fsync
// (the figures measured are sizes and reads, not durability; every
// design is run the same way) and gc in the foreground.
func simConfigRepo(tb testing.TB, dir string) {
	for _, kv := range [][2]string{{"user.name", "Sim"}, {"user.email", "sim@example.com"}, {"core.fsync", "none"}, {"gc.autoDetach", "false"}} {
		gitstatetest.Git(tb, dir, "config", kv[0], kv[1])
	}
}

// clock is the stores' Now: simulated time, a millisecond further at
// every call so commits stay ordered.
func (s *teamSim) clock() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = s.now.Add(time.Millisecond)
	return s.now
}

func (s *teamSim) setNow(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.After(s.now) {
		s.now = t
	}
}

func (s *teamSim) elapsed() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now.Sub(s.start)
}

// call makes one tool call on a clone and decodes its data into out (if
// not nil). It reports whether the call succeeded.
func (s *teamSim) call(clone int, caller, token, tool string, args any, out any) bool {
	b, err := json.Marshal(args)
	if err != nil {
		s.tb.Fatal(err)
	}
	res := s.reg.CallAs(s.ctx, s.clones[clone].st, tools.Origin{ID: caller, Token: token}, tool, b)
	s.calls++
	s.byTool[tool]++
	if !res.OK {
		s.refused++
		if res.Error != nil && res.Error.Code == tools.InternalError {
			s.tb.Fatalf("%s by %s: %v", tool, caller, res.Error)
		}
		return false
	}
	if out != nil {
		d, err := json.Marshal(res.Data)
		if err == nil {
			err = json.Unmarshal(d, out)
		}
		if err != nil {
			s.tb.Fatal(err)
		}
	}
	return true
}

func (s *teamSim) mustCall(clone int, caller, token, tool string, args any, out any) {
	if !s.call(clone, caller, token, tool, args, out) {
		s.tb.Fatalf("%s by %s was refused", tool, caller)
	}
}

// sync merges clone i with origin and pushes, in-process and on the
// simulated clock (the syncs measured are processes: measureSync).
func (s *teamSim) sync(i int) {
	if _, err := builtin.Registry().Sync(s.ctx, s.clones[i].st, tools.Origin{ID: simHuman}, "origin", true, nil); err != nil {
		s.tb.Fatalf("sync clone%d: %v", i, err)
	}
	s.syncs++
}

// The maintenance origin gets (simConfig.Origin).
const (
	originPush  = "push"
	originForge = "forge"
)

// maintainOrigin is a forge's maintenance after a round of pushes: the
// small packs the pushes left are rolled up geometrically and a
// multi-pack bitmap covers every pack, so that what a fetch asks for is
// counted from bitmaps rather than by walking the history (hosted forges
// repack after pushes this way; a bare origin on a disk gets only git's
// gc --auto, at 50 packs). Nothing for originPush: receive-pack ran that.
func (s *teamSim) maintainOrigin() {
	if s.cfg.Origin != originForge {
		return
	}
	s.gitOut(s.origin, "repack", "-q", "-d", "--geometric=2", "--write-midx", "--write-bitmap-index")
}

// chance is true with probability perHour/ticksPerHour: an event that
// happens perHour times an hour on average, asked once a tick.
func (s *teamSim) chance(perHour float64) bool { return s.rng.Float64() < perHour/ticksPerHour }

// run simulates cfg.Span, calling at for each checkpoint (and the end).
func (s *teamSim) run(at func(elapsed time.Duration)) {
	checkpoints := append([]time.Duration(nil), s.cfg.Checkpoints...)
	checkpoints = append(checkpoints, s.cfg.Span)
	sort.Slice(checkpoints, func(i, j int) bool { return checkpoints[i] < checkpoints[j] })
	for len(checkpoints) > 0 && checkpoints[0] <= time.Duration(s.tick)*simTick {
		checkpoints = checkpoints[1:] // measured before a resume
	}
	ticks := int(s.cfg.Span / simTick)
	syncTicks := max(1, int(s.cfg.SyncEvery/simTick))
	order, base := s.order, s.base
	began := time.Now()
	progressTicks := int(6 * time.Hour / simTick)
	for t := s.tick + 1; t <= ticks; t++ {
		if s.cfg.Measure && t%progressTicks == 0 { // a month runs for hours: say how far it is
			fmt.Fprintf(os.Stderr, "  simulated %s: %d calls in %s\n", time.Duration(t)*simTick, s.calls, time.Since(began).Round(time.Second))
		}
		s.setNow(s.start.Add(base + time.Duration(t)*simTick))
		if t%syncTicks == 0 {
			for i := range s.clones {
				s.sync(i)
			}
			s.maintainOrigin()
		}
		if s.cfg.Retain != "" && t%s.retainTicks() == 0 {
			s.archive()
		}
		s.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			s.act(s.agents[i])
		}
		s.tick = t
		for len(checkpoints) > 0 && time.Duration(t)*simTick >= checkpoints[0] {
			for i := range s.clones { // what every machine has, before it is measured
				s.sync(i)
			}
			if at != nil {
				at(checkpoints[0])
			}
			checkpoints = checkpoints[1:]
		}
	}
}

// act is one agent's turn in a tick.
func (s *teamSim) act(a *simAgent) {
	now := s.elapsed()
	var inbox struct {
		Mails []struct {
			ID string `json:"id"`
		} `json:"mails"`
	}
	call := func(tool string, args any, out any) bool { return s.call(a.clone, a.id, a.token, tool, args, out) }
	call("mail_list_inbox", map[string]any{}, &inbox)
	for i, m := range inbox.Mails {
		if i == 2 { // the rest next time
			break
		}
		call("mail_read", map[string]any{"mail_id": m.ID}, nil)
	}
	if s.chance(statusPerHour) {
		call("agent_get_status", map[string]any{}, nil)
	}
	if s.chance(mailPerHour) {
		to := s.agents[s.rng.IntN(len(s.agents))].id
		call("mail_send", map[string]any{"to": to, "subject": fmt.Sprintf("progress %d", s.calls),
			"body": "Finished the parser changes for the tokenizer; tests pass locally. Next: the error paths and their messages."}, nil)
	}
	if !a.worker {
		if s.chance(createPerHour) {
			var task struct {
				ID string `json:"id"`
			}
			if call("task_create", map[string]any{"title": fmt.Sprintf("task %d", s.calls), "description": "Make the importer accept the new header format and add a test for it."}, &task) {
				s.pending = append(s.pending, task.ID)
			}
		}
		if s.chance(listPerHour) {
			call("task_list", map[string]any{"state": "IN_PROGRESS"}, nil)
		}
		if s.chance(decidePerHour) {
			call("log_decision", map[string]any{"title": fmt.Sprintf("decision %d", s.calls), "body": "Keep the old format readable for a release; the importer converts it."}, nil)
		}
		return
	}
	switch {
	case a.task != "" && now >= time.Duration(a.taskDone.Sub(s.start)):
		call("task_update_status", map[string]any{"id": a.task, "state": "COMPLETED"}, nil)
		a.task = ""
	case a.task == "" && len(s.pending) > 0 && s.chance(claimPerHour):
		i := s.rng.IntN(len(s.pending))
		id := s.pending[i]
		if call("task_claim", map[string]any{"id": id}, nil) {
			a.task, a.taskDone = id, s.start.Add(now+time.Hour+time.Duration(s.rng.Int64N(int64(2*time.Hour))))
		}
		s.pending = append(s.pending[:i], s.pending[i+1:]...)
	}
	switch {
	case a.lock != "" && now >= time.Duration(a.lockDone.Sub(s.start)):
		call("lock_release", map[string]any{"name": a.lock}, nil)
		a.lock = ""
	case a.lock == "" && s.chance(lockPerHour):
		name := "area-" + strconv.Itoa(s.rng.IntN(simLockNames))
		if call("lock_acquire", map[string]any{"name": name, "reason": "editing"}, nil) {
			a.lock, a.lockDone = name, s.start.Add(now+lockHold)
		}
	}
}

// gitOut runs git in dir and returns its trimmed output.
func (s *teamSim) gitOut(dir string, args ...string) string {
	return gitstatetest.Git(s.tb, dir, args...)
}

// dirSize is the bytes of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// countCommits counts the commits reachable from refs matching pattern
// (a for-each-ref pattern) in dir, 0 if none.
func (s *teamSim) countCommits(dir string, patterns ...string) int {
	var refs []string
	for _, p := range patterns {
		out := s.gitOut(dir, "for-each-ref", "--format=%(refname)", p)
		if out != "" {
			refs = append(refs, strings.Fields(out)...)
		}
	}
	if len(refs) == 0 {
		return 0
	}
	n, err := strconv.Atoi(s.gitOut(dir, append([]string{"rev-list", "--count"}, refs...)...))
	if err != nil {
		s.tb.Fatal(err)
	}
	return n
}

// recordedCalls counts the audit records of tool calls (commits with a
// Codex-Tool other than sync's merges) reachable from the refs matching
// patterns in dir.
func (s *teamSim) recordedCalls(dir string, patterns ...string) int {
	var refs []string
	for _, p := range patterns {
		if out := s.gitOut(dir, "for-each-ref", "--format=%(refname)", p); out != "" {
			refs = append(refs, strings.Fields(out)...)
		}
	}
	if len(refs) == 0 {
		return 0
	}
	cmd := exec.Command("git", append([]string{"log", "--format=%(trailers:key=Codex-Tool,valueonly,separator=)%x09%(trailers:key=Codex-Folded,valueonly,separator=)"}, refs...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		s.tb.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		tool, folded, _ := strings.Cut(line, "\t")
		if folded = strings.TrimSpace(folded); folded != "" {
			// a fold of a day's reads (gitstate.FoldReads): one commit
			// standing for that many read commits
			k, err := strconv.Atoi(folded)
			if err != nil {
				s.tb.Fatalf("%s: Codex-Folded %q", dir, folded)
			}
			n += k
			continue
		}
		if tool = strings.TrimSpace(tool); tool != "" && tool != "sync" && tool != "init" {
			n++
		}
	}
	return n
}

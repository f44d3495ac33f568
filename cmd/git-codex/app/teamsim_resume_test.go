package app

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools/builtin"
)

// A month of the team takes longer than a machine may keep running one
// process (~5 hours), so BenchmarkTeamMonth can go on from its last
// checkpoint in another process: GIT_CODEX_SIM_RESUME=<dir> keeps there,
// at every checkpoint, origin, the clones, the laggard and what the
// simulation holds in memory (simResume, sim.json), and a run started
// with the same variable and a sim.json in it goes on from that
// checkpoint with the same calls it would have made (the random source
// and the agents' order are kept too). The directory holds the agents'
// tokens: it is a test's scratch, never shared.

// simResume is what a simulation holds in memory at a checkpoint.
type simResume struct {
	Design  string
	Seed    uint64
	Start   time.Time
	Now     time.Time
	Base    time.Duration
	Tick    int
	RNG     []byte
	Order   []int
	Agents  []simAgentState
	Pending []string
	Calls   int
	Refused int
	Syncs   int
	ByTool  map[string]int
	Empty   simFigures // the empty state's figures, which write-vs-empty divides by
}

// simAgentState is a simAgent as sim.json keeps it.
type simAgentState struct {
	ID, Token string
	Worker    bool
	Clone     int
	Task      string
	TaskDone  time.Time
	Lock      string
	LockDone  time.Time
}

// simResumeFile is sim.json's path in a resume directory.
func simResumeFile(dir string) string { return filepath.Join(dir, "sim.json") }

// saveResume keeps the simulation in dir (GIT_CODEX_SIM_RESUME): the
// repositories copied into dir.new, then swapped in, so that a run
// stopped while saving leaves the previous checkpoint whole.
func (s *teamSim) saveResume(dir, design, laggard string, empty simFigures) {
	s.tb.Helper()
	next := dir + ".new"
	os.RemoveAll(next)
	if err := os.MkdirAll(next, 0o755); err != nil {
		s.tb.Fatal(err)
	}
	repos := []string{s.origin, laggard}
	for _, c := range s.clones {
		repos = append(repos, c.dir)
	}
	for _, r := range repos {
		gitstatetest.WaitForMaintenance(s.tb, r) // nothing of git's writes while it is copied
		if out, err := exec.Command("cp", "-a", r, filepath.Join(next, filepath.Base(r))).CombinedOutput(); err != nil {
			s.tb.Fatalf("keep %s: %v\n%s", r, err, out)
		}
	}
	rng, err := s.pcg.MarshalBinary()
	if err != nil {
		s.tb.Fatal(err)
	}
	s.mu.Lock()
	r := simResume{Design: design, Seed: s.cfg.Seed, Start: s.start, Now: s.now, Base: s.base, Tick: s.tick, RNG: rng,
		Order: s.order, Pending: s.pending, Calls: s.calls, Refused: s.refused, Syncs: s.syncs, ByTool: s.byTool, Empty: empty}
	s.mu.Unlock()
	for _, a := range s.agents {
		r.Agents = append(r.Agents, simAgentState{ID: a.id, Token: a.token, Worker: a.worker, Clone: a.clone,
			Task: a.task, TaskDone: a.taskDone, Lock: a.lock, LockDone: a.lockDone})
	}
	b, err := json.MarshalIndent(r, "", "\t")
	if err != nil {
		s.tb.Fatal(err)
	}
	if err := os.WriteFile(simResumeFile(next), b, 0o600); err != nil {
		s.tb.Fatal(err)
	}
	old := dir + ".old"
	os.RemoveAll(old)
	if err := os.Rename(dir, old); err != nil && !os.IsNotExist(err) {
		s.tb.Fatal(err)
	}
	if err := os.Rename(next, dir); err != nil {
		s.tb.Fatal(err)
	}
	os.RemoveAll(old)
}

// resumeTeamSim goes on from the checkpoint kept in dir, if it holds one
// of design with cfg's seed: the repositories are copied into a new root
// (their remotes pointed at its origin), the stores opened on the
// simulated clock and the simulation's memory restored. It returns nil
// and "" when dir holds no checkpoint.
func resumeTeamSim(tb testing.TB, cfg simConfig, dir, design string) (*teamSim, string, simFigures) {
	tb.Helper()
	b, err := os.ReadFile(simResumeFile(dir))
	if os.IsNotExist(err) {
		return nil, "", simFigures{}
	}
	if err != nil {
		tb.Fatal(err)
	}
	var r simResume
	if err := json.Unmarshal(b, &r); err != nil {
		tb.Fatalf("%s: %v", simResumeFile(dir), err)
	}
	if r.Design != design || r.Seed != cfg.Seed {
		tb.Fatalf("%s holds design=%s seed=%d, not design=%s seed=%d", dir, r.Design, r.Seed, design, cfg.Seed)
	}
	s := &teamSim{tb: tb, cfg: cfg, ctx: context.Background(), reg: builtin.Registry(), pcg: &rand.PCG{},
		root: tb.TempDir(), byTool: r.ByTool, start: r.Start, now: r.Now, base: r.Base, tick: r.Tick, order: r.Order,
		pending: r.Pending, calls: r.Calls, refused: r.Refused, syncs: r.Syncs}
	if err := s.pcg.UnmarshalBinary(r.RNG); err != nil {
		tb.Fatal(err)
	}
	s.rng = rand.New(s.pcg)
	for _, a := range r.Agents {
		s.agents = append(s.agents, &simAgent{id: a.ID, token: a.Token, worker: a.Worker, clone: a.Clone,
			task: a.Task, taskDone: a.TaskDone, lock: a.Lock, lockDone: a.LockDone})
	}
	s.origin = filepath.Join(s.root, "origin.git")
	copyIn := func(name string) string {
		dst := filepath.Join(s.root, name)
		if out, err := exec.Command("cp", "-a", filepath.Join(dir, name), dst).CombinedOutput(); err != nil {
			tb.Fatalf("resume %s: %v\n%s", name, err, out)
		}
		return dst
	}
	copyIn("origin.git")
	laggard := copyIn("laggard")
	gitstatetest.Git(tb, laggard, "remote", "set-url", "origin", s.origin)
	tb.Cleanup(func() { gitstatetest.WaitForMaintenance(tb, laggard) })
	for i := 0; i < cfg.Clones; i++ {
		c := copyIn(fmt.Sprintf("clone%d", i))
		gitstatetest.Git(tb, c, "remote", "set-url", "origin", s.origin)
		st, err := gitstate.Open(c, gitstate.Options{Now: s.clock})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { st.Close() })
		s.clones = append(s.clones, &simClone{dir: c, st: st})
	}
	tb.Cleanup(func() {
		for _, c := range s.clones {
			gitstatetest.WaitForMaintenance(tb, c.dir)
		}
	})
	return s, laggard, r.Empty
}

// TestTeamSimulationResumes checks that a simulation kept at a checkpoint
// and resumed in a new root makes the same calls as one that ran through:
// the same calls by tool, the same refusals, as many records on origin's
// tip (ids and tokens are random, so the trees themselves differ).
func TestTeamSimulationResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("two simulated hours, twice")
	}
	cfg := simConfig{Span: 2 * time.Hour, Checkpoints: []time.Duration{time.Hour}, Workers: 4, Supervisors: 2, Clones: 2,
		SyncEvery: 20 * time.Minute, Retain: "30m", RetainEvery: time.Hour, Origin: originForge, Seed: 3}
	through := newTeamSim(t, cfg)
	through.run(nil)

	dir := filepath.Join(t.TempDir(), "resume")
	first := newTeamSim(t, cfg)
	laggard := filepath.Join(first.root, "laggard")
	first.gitOut(first.root, "clone", "-q", "--no-local", first.origin, laggard)
	stop := cfg
	stop.Span, stop.Checkpoints = time.Hour, nil
	first.cfg = stop
	first.run(func(time.Duration) { first.saveResume(dir, "test", laggard, simFigures{}) })
	for _, c := range first.clones {
		gitstatetest.WaitForMaintenance(t, c.dir)
	}

	resumed, _, _ := resumeTeamSim(t, cfg, dir, "test")
	if resumed == nil {
		t.Fatal("no checkpoint kept")
	}
	resumed.run(nil)

	if resumed.calls != through.calls || resumed.refused != through.refused || fmt.Sprint(resumed.byTool) != fmt.Sprint(through.byTool) {
		t.Errorf("resumed: %d calls (%d refused) %v; ran through: %d calls (%d refused) %v",
			resumed.calls, resumed.refused, resumed.byTool, through.calls, through.refused, through.byTool)
	}
	if through.calls < 1000 {
		t.Errorf("ran through with %d calls: too few to tell", through.calls)
	}
	records := func(s *teamSim) int {
		return len(strings.Split(s.gitOut(s.origin, "ls-tree", "-r", "--name-only", gitstate.RefState), "\n"))
	}
	if a, b := records(resumed), records(through); a != b {
		t.Errorf("origin's tip holds %d records resumed, %d ran through", a, b)
	}
}

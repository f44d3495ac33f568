package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// simSpan reads a simulated span: a Go duration ("36h") or days ("7d",
// "30d"); def when s is empty.
func simSpan(tb testing.TB, s string, def time.Duration) time.Duration {
	if s == "" {
		return def
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(days, 64)
		if err != nil {
			tb.Fatalf("GIT_CODEX_SIM_SPAN=%q: %v", s, err)
		}
		return time.Duration(n * float64(24*time.Hour))
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		tb.Fatalf("GIT_CODEX_SIM_SPAN=%q: %v", s, err)
	}
	return d
}

// simDesigns are the designs a benchmark compares in one run.
var simDesigns = []struct {
	name         string
	readsOnState bool
	retain       bool // archive once a simulated day (simRetain)
}{
	{"today", true, false},     // every call a commit on refs/codex/state
	{"reads", false, false},    // reads and refusals on each machine's reads refs
	{"retention", false, true}, // reads, and what ended archived every day (retention)
}

// BenchmarkTeamMonth is issue 27's simulation: twenty agents on three
// clones, a simulated day by default; GIT_CODEX_SIM_SPAN sets the span
// ("7d", "30d": a month, hours of machine time), GIT_CODEX_SIM_SPANS a
// design's own ("today=2d,retention=7d": the old design, slower, for the
// ratios only) and GIT_CODEX_SIM_CHECKPOINT the interval between measured
// checkpoints (default a day). GIT_CODEX_SIM_ORIGIN says what maintenance
// origin gets: "forge" (default) or "push" (simConfig.Origin).
// GIT_CODEX_SIM_RESUME=<dir> keeps each design's run at every checkpoint
// and goes on from the last one kept (teamsim_resume_test.go). Each design
// runs the same calls (same seed); the figures go to stderr as a table,
// one row per checkpoint, and the last checkpoint's as metrics.
func BenchmarkTeamMonth(b *testing.B) {
	every := simSpan(b, os.Getenv("GIT_CODEX_SIM_CHECKPOINT"), 24*time.Hour)
	origin := os.Getenv("GIT_CODEX_SIM_ORIGIN")
	switch origin {
	case "":
		origin = originForge
	case originForge, originPush:
	default:
		b.Fatalf("GIT_CODEX_SIM_ORIGIN=%q: forge or push", origin)
	}
	bin := buildBinary(b)
	for _, d := range simDesigns {
		if !simDesignWanted(d.name) {
			continue
		}
		span := simDesignSpan(b, d.name)
		var checkpoints []time.Duration
		for c := every; c < span; c += every {
			checkpoints = append(checkpoints, c)
		}
		b.Run("design="+d.name, func(b *testing.B) {
			cfg := simConfig{Span: span, Checkpoints: checkpoints, Workers: 16, Supervisors: 4, Clones: 3,
				SyncEvery: time.Hour, ReadsOnState: d.readsOnState, Measure: true, Origin: origin, Seed: 1}
			if d.retain {
				cfg.Retain = simRetain()
			}
			var last simFigures
			resume := os.Getenv("GIT_CODEX_SIM_RESUME")
			if resume != "" {
				resume = filepath.Join(resume, d.name)
			}
			s, laggard, empty := (*teamSim)(nil), "", simFigures{}
			if resume != "" {
				s, laggard, empty = resumeTeamSim(b, cfg, resume, d.name)
			}
			if s != nil {
				fmt.Fprintf(os.Stderr, "design=%s span=%s origin=%s window=%s, resumed at %s (%d calls)\n%s\n%s\n",
					d.name, span, origin, simWindow(b), time.Duration(s.tick)*simTick, s.calls, last.header(), empty.row())
			} else {
				s = newTeamSim(b, cfg)
				laggard = filepath.Join(s.root, "laggard")
				s.gitOut(s.root, "clone", "-q", "--no-local", s.origin, laggard) // (see measure)
				simConfigRepo(b, laggard)
				gitstatetest.Git(b, laggard, "config", "codex.firstSyncDays", "0") // it fetches it all
				b.Cleanup(func() { gitstatetest.WaitForMaintenance(b, laggard) })
				fmt.Fprintf(os.Stderr, "design=%s span=%s origin=%s window=%s\n%s\n", d.name, span, origin, simWindow(b), last.header())
				empty = s.measure(bin, laggard, 0)
				fmt.Fprintln(os.Stderr, empty.row())
			}
			began := time.Now()
			s.run(func(elapsed time.Duration) {
				last = s.measure(bin, laggard, elapsed)
				fmt.Fprintln(os.Stderr, last.row())
				if resume != "" {
					s.saveResume(resume, d.name, laggard, empty)
				}
			})
			fmt.Fprintf(os.Stderr, "design=%s: %d calls (%d refused), %d syncs in %s; calls by tool: %v\n",
				d.name, s.calls, s.refused, s.syncs, time.Since(began).Round(time.Second), s.byTool)
			b.ReportMetric(float64(last.FetchBytes)/(1<<20), "fetch-MB")
			b.ReportMetric(ms(last.FirstSync), "first-sync-ms")
			b.ReportMetric(float64(last.ShallowBytes)/(1<<20), "shallow-fetch-MB")
			b.ReportMetric(ms(last.ShallowSync), "shallow-first-sync-ms")
			b.ReportMetric(ms(last.DaySync), "day-sync-ms")
			b.ReportMetric(ms(last.Log), "log-ms")
			b.ReportMetric(ms(last.Status), "status-ms")
			b.ReportMetric(ms(last.Inbox), "inbox-ms")
			b.ReportMetric(ms(last.Write)/ms(empty.Write), "write-vs-empty")
			b.ReportMetric(ms(last.WebFirst), "web-ms")
			b.ReportMetric(ms(last.WebAtWeek), "web-at-week-ms")
			b.ReportMetric(ms(last.GC), "gc-ms")
			b.ReportMetric(float64(last.StateCommits), "state-commits")
		})
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// TestTeamSimulationHolds is the simulation at CI size: the team works
// on three clones, then every call must be recorded exactly once in what
// the clones and origin hold. The design a team runs (retention) works a
// simulated day (~68k calls, ~5 min of CPU), syncing every simulated hour
// and archiving hourly, so that a UTC midnight passes and a day's reads
// are folded; the designs before it work half a simulated hour (~1,400
// calls), since a day of every call a commit on the state takes ~20 min.
func TestTeamSimulationHolds(t *testing.T) {
	if testing.Short() {
		t.Skip("a simulated day: ~68k calls")
	}
	for _, d := range simDesigns {
		t.Run("design="+d.name, func(t *testing.T) {
			cfg := simConfig{Span: 30 * time.Minute, Workers: 16, Supervisors: 4, Clones: 3,
				SyncEvery: 10 * time.Minute, ReadsOnState: d.readsOnState, Seed: 2}
			if d.retain {
				// archive what ended an hour ago, every simulated hour;
				// origin repacked after every sync round, as a forge would
				cfg.Span, cfg.SyncEvery = 24*time.Hour, time.Hour
				cfg.Retain, cfg.RetainEvery, cfg.Origin = "1h", time.Hour, originForge
			}
			s := newTeamSim(t, cfg)
			s.run(nil)
			if n := s.keptDeleted(s.origin); n != 0 {
				t.Errorf("%d merges kept records one side had deleted (archived records came back)", n)
			}
			recorded := s.recordedCalls(s.origin, "refs/codex/state")
			for _, c := range s.clones {
				recorded += s.recordedCalls(c.dir, "refs/codex/reads/")
			}
			if recorded != s.calls {
				t.Errorf("%d calls made, %d recorded on origin's state and the clones' reads refs", s.calls, recorded)
			}
			if d.retain {
				// a UTC midnight passed: the archiving clone's reads of
				// the day before were folded, and counted above through
				// the fold
				folds := ""
				for _, c := range s.clones {
					folds += s.gitOut(c.dir, "log", "--format=%(trailers:key=Codex-Folded,valueonly,separator=)", "--glob=refs/codex/reads/*")
				}
				if strings.TrimSpace(folds) == "" {
					t.Errorf("no reads ref was folded in a simulated day")
				}
			}
			if d.readsOnState {
				return
			}
			// the shared history carries what changed: no read, no
			// refusal, and no reads ref reaches origin
			if n := s.countCommits(s.origin, "refs/codex/reads/"); n != 0 {
				t.Errorf("origin holds %d commits of reads refs", n)
			}
			shared := s.recordedCalls(s.origin, "refs/codex/state")
			reads := s.byTool["mail_list_inbox"] + s.byTool["agent_get_status"] + s.byTool["task_list"]
			if shared > s.calls-reads {
				t.Errorf("origin's state records %d calls; %d of the %d made were reads", shared, reads, s.calls)
			}
			if shared == 0 {
				t.Errorf("origin's state records no call")
			}
		})
	}
}

// TestSimStartIsNoon: a simulation starts at noon UTC whatever the hour
// it runs at, so that the simulated day TestTeamSimulationHolds works
// crosses a midnight an archive folds at. Started at the real clock's
// hour, a run begun at 00:xx UTC ended before its fold was due.
func TestSimStartIsNoon(t *testing.T) {
	for _, now := range []string{"2026-11-28T00:20:00Z", "2026-11-28T12:00:00Z", "2026-11-28T23:59:59Z", "2026-11-28T05:00:00+09:00"} {
		n, err := time.Parse(time.RFC3339, now)
		if err != nil {
			t.Fatal(err)
		}
		s := simStart(n)
		if s.Location() != time.UTC || s.Hour() != 12 || s.Minute() != 0 || s.Second() != 0 {
			t.Errorf("simStart(%s) = %s, want noon UTC", now, s)
		}
		if back := n.Sub(s); back < simStartOffset-12*time.Hour || back > simStartOffset+12*time.Hour {
			t.Errorf("simStart(%s) = %s: %s before, want %s ± 12h", now, s, back, simStartOffset)
		}
	}
}

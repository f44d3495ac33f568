package gitstate_test

// Benchmarks for `make bench`. The large state (100k mail records fanned out
// as mail/<recipient>/<a>/<b>/<id>.json over 100 recipients, plus 100 for
// recipient "bench-target", behind 100k commits of history) is built once
// with `git fast-import` into a directory under os.TempDir() named by
// benchLargeVersion, and reused by later runs: each benchmark works on a
// copy whose packs are hard links, so the cached repository never changes.
//
// The store's periodic `git gc --auto` is off (PackEvery: -1) so that each
// figure measures transactions, not packing.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

const (
	benchLargeVersion = "v2"
	benchRecords      = 100_000 // records, and commits, of the large state
	benchRecipients   = 100
	benchTarget       = "bench-target" // gets every 1000th mail: 100 of them
)

// benchID is gitstate.NewID's format from a seeded generator, so the large
// state is the same on every machine.
func benchID(r *rand.Rand, t time.Time) string {
	const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"
	ms := uint64(t.UnixMilli())
	b := []byte("m-")
	for i := 9; i >= 0; i-- {
		b = append(b, alphabet[(ms>>(5*uint(i)))&31])
	}
	for i := 0; i < 6; i++ {
		b = append(b, alphabet[r.IntN(32)])
	}
	return string(b)
}

func mailPath(recipient, id string) string {
	return "mail/" + recipient + "/" + gitstate.Fanout(id) + "/" + id + ".json"
}

// largeBench is the large state: benchRecords mails, one commit each.
var largeBench = &benchRepo{
	name:    "gitstate-bench-large",
	version: benchLargeVersion,
	about:   fmt.Sprintf("the large state (%d records, %d commits)", benchRecords, benchRecords),
	feed: func(w *bufio.Writer, data func(string)) {
		r := rand.New(rand.NewPCG(1, 2))
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := 0; i < benchRecords; i++ {
			when := t0.Add(time.Duration(i) * time.Second)
			id := benchID(r, when)
			to := fmt.Sprintf("agent-%03d", i%benchRecipients)
			if i%1000 == 999 {
				to = benchTarget
			}
			fmt.Fprintf(w, "commit %s\ncommitter git codex <git-codex@localhost> %d +0000\n", gitstate.RefState, when.Unix())
			data(fmt.Sprintf("send_mail %s to %s\n\n%s: send_mail\n%s: agent-%03d\n%s: ok\n%s: %s\n%s: %d\n",
				id, to, gitstate.TrailerTool, gitstate.TrailerActor, (i+1)%benchRecipients, gitstate.TrailerResult,
				gitstate.TrailerTarget, id, gitstate.TrailerClock, i+1))
			if i == 0 {
				fmt.Fprintf(w, "M 100644 inline config/version.json\n")
				data("{\n  \"n\": 1\n}\n")
			}
			fmt.Fprintf(w, "M 100644 inline %s\n", mailPath(to, id))
			data(fmt.Sprintf("{\n  \"id\": %q,\n  \"from\": \"agent-%03d\",\n  \"to\": %q,\n  \"subject\": \"bench mail %d\",\n  \"body\": \"%s\",\n  \"clock\": %d\n}\n",
				id, (i+1)%benchRecipients, to, i, strings.Repeat("lorem ipsum ", 1+i%5), i+1))
		}
	},
}

// largeRepo returns the cached large repository, building it on first use.
func largeRepo(b *testing.B) string { return largeBench.get(b) }

// copyRepo copies a bare repository to a fresh directory, hard-linking its
// (immutable) pack files.
func copyRepo(b *testing.B, src string) string {
	b.Helper()
	dst := filepath.Join(b.TempDir(), "repo.git")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if filepath.Base(filepath.Dir(p)) == "pack" {
			return os.Link(p, to)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(to)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		b.Fatal(err)
	}
	return dst
}

func openBench(b *testing.B, dir string) *gitstate.Store {
	b.Helper()
	s, err := gitstate.Open(dir, gitstate.Options{PackEvery: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// benchUpdates runs one transaction per iteration, each putting one mail for
// one of the recipients, and reports the latency percentiles.
func benchUpdates(b *testing.B, s *gitstate.Store) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	put := func() {
		to := fmt.Sprintf("agent-%03d", r.IntN(benchRecipients))
		_, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			id := tx.NewID("m")
			tx.SetMeta(gitstate.Meta{Summary: "send_mail " + id, Trailers: []gitstate.Trailer{
				{Key: gitstate.TrailerTool, Value: "send_mail"},
				{Key: gitstate.TrailerTarget, Value: id},
			}})
			return tx.Put(mailPath(to, id), map[string]any{"id": id, "to": to, "subject": "bench", "clock": tx.Clock()})
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	put() // warm up: pack indexes, lock file
	var durs []time.Duration
	for b.Loop() {
		start := time.Now()
		put()
		durs = append(durs, time.Since(start))
	}
	reportPercentiles(b, durs)
}

func reportPercentiles(b *testing.B, durs []time.Duration) {
	if len(durs) == 0 {
		return
	}
	slices.Sort(durs)
	pct := func(p float64) float64 {
		return float64(durs[int(p*float64(len(durs)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// BenchmarkUpdateEmpty: one Put per transaction, starting from an empty state.
func BenchmarkUpdateEmpty(b *testing.B) {
	benchUpdates(b, openBench(b, newStateRepo(b)))
}

// BenchmarkUpdateLarge: the same transactions on the large state (100k
// records, 100k commits). Compare ns/op with BenchmarkUpdateEmpty: the cost
// of a transaction must not grow with the state.
func BenchmarkUpdateLarge(b *testing.B) {
	benchUpdates(b, openBench(b, copyRepo(b, largeRepo(b))))
}

// BenchmarkViewGet: a View that reads one record of the large state.
func BenchmarkViewGet(b *testing.B) {
	s := openBench(b, copyRepo(b, largeRepo(b)))
	ctx := context.Background()
	var paths []string
	err := s.View(ctx, func(sn *gitstate.Snapshot) error {
		for _, rcp := range []string{"agent-007", "agent-042", "agent-099"} {
			if err := sn.Walk("mail/"+rcp, func(p string, _ []byte) error { paths = append(paths, p); return nil }); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || len(paths) < 2500 {
		b.Fatalf("%d paths, %v", len(paths), err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	for b.Loop() {
		p := paths[r.IntN(len(paths))]
		err := s.View(ctx, func(sn *gitstate.Snapshot) error {
			var m map[string]any
			return sn.Get(p, &m)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWalk100of100k: a View that walks one recipient's 100 mails among
// the 100k records.
func BenchmarkWalk100of100k(b *testing.B) {
	s := openBench(b, copyRepo(b, largeRepo(b)))
	ctx := context.Background()
	s.View(ctx, func(*gitstate.Snapshot) error { return nil }) // warm up: pack indexes
	for b.Loop() {
		n := 0
		err := s.View(ctx, func(sn *gitstate.Snapshot) error {
			return sn.Walk("mail/"+benchTarget, func(string, []byte) error { n++; return nil })
		})
		if err != nil || n != 100 {
			b.Fatalf("walked %d records, %v; want 100", n, err)
		}
	}
}

// BenchmarkParallelProcesses: 16 writer processes, 25 transactions each,
// all on one repository; reports commits/s from the moment all are ready,
// and the 50th and 99th percentile of one write's duration (Update called
// to Update returned, lock wait included). The store's maintenance runs
// as in production: the geometric repacks it starts in the background
// share the CPUs with the writers.
//
// With GITSTATE_BENCH_PHASES=1 it also logs where a write's time goes: for
// each stage of the write path (Store.phase), the time from the stage
// before, as percentiles over every write.
func BenchmarkParallelProcesses(b *testing.B) {
	const procs, writes = 16, 25
	dir := newStateRepo(b)
	env := []string{envWaitGo + "=1", envLatency + "=1"}
	tracePhases := os.Getenv("GITSTATE_BENCH_PHASES") == "1"
	if tracePhases {
		env = append(env, envPhases+"=1")
	}
	var commits int
	var elapsed time.Duration
	var lats []time.Duration
	var phases []string
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ws := make([]*writerProc, procs)
		for j := range ws {
			ws[j] = startWriter(b, dir, fmt.Sprintf("i%dp%d", i, j), writes, env...)
		}
		for _, w := range ws {
			w.waitReady(b, time.Minute)
		}
		b.StartTimer()
		start := time.Now()
		for _, w := range ws {
			w.stdin.Write([]byte("go\n"))
		}
		for _, w := range ws {
			if err := w.wait(5 * time.Minute); err != nil {
				b.Fatalf("writer %s: %v\n%s", w.name, err, w.stderr.String())
			}
			commits += len(w.acked())
		}
		elapsed += time.Since(start)
		for _, w := range ws {
			w.mu.Lock()
			lats = append(lats, w.lats...)
			phases = append(phases, w.phases...)
			w.mu.Unlock()
		}
	}
	b.StopTimer()
	gitstatetest.WaitForMaintenance(b, dir)
	if want := b.N * procs * writes; commits != want {
		b.Fatalf("%d commits acknowledged, want %d", commits, want)
	}
	b.ReportMetric(float64(commits)/elapsed.Seconds(), "commits/s")
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(commits), "ns/commit")
	if len(lats) > 0 {
		slices.Sort(lats)
		b.ReportMetric(float64(lats[len(lats)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lats[len(lats)*99/100].Microseconds())/1000, "p99-ms")
	}
	if tracePhases {
		logPhases(b, phases)
	}
}

// logPhases logs, for each stage of the writes' "ph" lines (in the order
// they first appear), the mean and percentiles of the time it took to
// reach it from the stage before, and its share of the writes' total time.
func logPhases(b *testing.B, lines []string) {
	var order []string
	durs := map[string][]time.Duration{}
	var total time.Duration
	for _, l := range lines {
		for _, f := range strings.Fields(l) {
			name, ns, ok := strings.Cut(f, "=")
			n, err := strconv.ParseInt(ns, 10, 64)
			if !ok || err != nil {
				continue
			}
			if _, seen := durs[name]; !seen {
				order = append(order, name)
			}
			durs[name] = append(durs[name], time.Duration(n))
			total += time.Duration(n)
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "%d writes; time to reach each stage from the one before:\n%-12s %8s %8s %8s %8s %6s %6s\n", len(lines), "stage", "mean-ms", "p50-ms", "p90-ms", "p99-ms", "share", "count")
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for _, name := range order {
		d := durs[name]
		slices.Sort(d)
		var sum time.Duration
		for _, x := range d {
			sum += x
		}
		// count: how many writes passed the stage (a rescan happens in
		// some writes only)
		fmt.Fprintf(&out, "%-12s %8.3f %8.3f %8.3f %8.3f %5.1f%% %6d\n", name, ms(sum/time.Duration(len(d))), ms(d[len(d)/2]), ms(d[len(d)*9/10]), ms(d[len(d)*99/100]), 100*float64(sum)/float64(total), len(d))
	}
	// b.Log would cut the table at ten lines
	fmt.Fprint(os.Stderr, out.String())
}

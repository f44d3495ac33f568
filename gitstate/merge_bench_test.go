package gitstate_test

// Benchmarks of sync: merging two long divergent histories, and a sync that
// has nothing to do. The divergent repository is built once with
// `git fast-import` under os.TempDir(), named by benchDivergedVersion, and
// reused (through copyRepo) by later runs.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

const (
	benchDivergedVersion = "v2"
	benchBaseRecords     = 20_000 // mail records in the common base
	benchSideOps         = 10_000 // commits on each side after the base
	benchSideReads       = 2_000  // of which mark a base mail read (the rest send new mail)
	benchBothReads       = 500    // base mails read on both sides: resolved by the merge
	benchAgents          = 100    // every commit also updates its sender's agent record
)

// divergedBench is two histories of benchSideOps commits each on one base
// state of benchBaseRecords mails, as refs/heads/ours (also the state ref)
// and refs/heads/theirs. Every commit changes one mail (a new one, or the
// read flag of a base mail) and its sender's agent record, as mail_send and
// mail_read do; benchBothReads base mails and all agents are changed on both
// sides.
var divergedBench = &benchRepo{
	name:    "gitstate-bench-diverged",
	version: benchDivergedVersion,
	about:   fmt.Sprintf("two histories of %d commits on a %d-record base", benchSideOps, benchBaseRecords),
	feed: func(w *bufio.Writer, data func(string)) {
		r := rand.New(rand.NewPCG(7, 8))
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		mail := func(id, to string, clock int, read bool) string {
			return fmt.Sprintf("{\n  \"id\": %q,\n  \"from\": \"agent-000\",\n  \"to\": %q,\n  \"subject\": \"bench\",\n  \"body\": \"lorem ipsum\",\n  \"is_read\": %v,\n  \"clock\": %d\n}\n",
				id, to, read, clock)
		}
		agent := func(id string, clock int) string {
			return fmt.Sprintf("{\n  \"id\": %q,\n  \"type\": \"worker\",\n  \"state\": \"idle\",\n  \"clock\": %d\n}\n", id, clock)
		}
		message := func(summary string, clock int) string {
			return fmt.Sprintf("%s\n\n%s: bench\n%s: ok\n%s: %d\n", summary, gitstate.TrailerTool, gitstate.TrailerResult, gitstate.TrailerClock, clock)
		}

		// the base: one commit holding every base mail and agent
		type baseMail struct{ id, to string }
		base := make([]baseMail, benchBaseRecords)
		fmt.Fprintf(w, "commit %s\nmark :1\ncommitter git codex <git-codex@localhost> %d +0000\n", gitstate.RefState, t0.Unix())
		data(message("base", 1))
		fmt.Fprintf(w, "M 100644 inline config/config.json\n")
		data("{\n  \"entries\": {}\n}\n")
		for a := 0; a < benchAgents; a++ {
			id := fmt.Sprintf("agent-%03d", a)
			fmt.Fprintf(w, "M 100644 inline agents/%s.json\n", id)
			data(agent(id, 1))
		}
		for i := range base {
			base[i] = baseMail{benchID(r, t0.Add(time.Duration(i)*time.Millisecond)), fmt.Sprintf("agent-%03d", i%benchAgents)}
			fmt.Fprintf(w, "M 100644 inline %s\n", mailPath(base[i].to, base[i].id))
			data(mail(base[i].id, base[i].to, 1, false))
		}
		// which base mails each side reads: the first benchBothReads on both
		perm := r.Perm(benchBaseRecords)
		both, onlyOurs := perm[:benchBothReads], perm[benchBothReads:benchSideReads]
		onlyTheirs := perm[benchSideReads : 2*benchSideReads-benchBothReads]
		for side, ref := range []string{"refs/heads/ours", "refs/heads/theirs"} {
			reads := append(append([]int{}, both...), onlyOurs...)
			if side == 1 {
				reads = append(append([]int{}, both...), onlyTheirs...)
			}
			r.Shuffle(len(reads), func(i, j int) { reads[i], reads[j] = reads[j], reads[i] })
			readAt := map[int]int{} // op -> base mail
			for k, op := range r.Perm(benchSideOps)[:len(reads)] {
				readAt[op] = reads[k]
			}
			for op := 0; op < benchSideOps; op++ {
				clock := 2 + op
				when := t0.Add(time.Hour + time.Duration(op)*time.Second)
				fmt.Fprintf(w, "commit %s\ncommitter git codex <git-codex@localhost> %d +0000\n", ref, when.Unix()+int64(side))
				sender := fmt.Sprintf("agent-%03d", r.IntN(benchAgents))
				if bi, ok := readAt[op]; ok {
					data(message("mail_read "+base[bi].id, clock))
					if op == 0 {
						fmt.Fprintf(w, "from :1\n")
					}
					fmt.Fprintf(w, "M 100644 inline %s\n", mailPath(base[bi].to, base[bi].id))
					data(mail(base[bi].id, base[bi].to, clock, true))
				} else {
					id := benchID(r, when)
					to := fmt.Sprintf("agent-%03d", r.IntN(benchAgents))
					data(message("mail_send "+id, clock))
					if op == 0 {
						fmt.Fprintf(w, "from :1\n")
					}
					fmt.Fprintf(w, "M 100644 inline %s\n", mailPath(to, id))
					data(mail(id, to, clock, false))
				}
				fmt.Fprintf(w, "M 100644 inline agents/%s.json\n", sender)
				data(agent(sender, clock))
			}
		}
	},
	after: [][]string{{"update-ref", gitstate.RefState, "refs/heads/ours"}},
}

// divergedRepo returns the cached diverged repository, building it on
// first use.
func divergedRepo(b *testing.B) string { return divergedBench.get(b) }

// clockResolver is the benchmark's Resolver: the higher "clock" wins, ties
// go to the larger encoding (what tools.MergeRecord does for records other
// than the config).
func clockResolver(_ string, _, ours, theirs []byte) []byte {
	switch {
	case ours == nil:
		return theirs
	case theirs == nil:
		return ours
	}
	var o, t struct {
		Clock uint64 `json:"clock"`
	}
	json.Unmarshal(ours, &o)
	json.Unmarshal(theirs, &t)
	switch {
	case o.Clock > t.Clock:
		return ours
	case t.Clock > o.Clock:
		return theirs
	case bytes.Compare(ours, theirs) >= 0:
		return ours
	}
	return theirs
}

// BenchmarkMergeDiverged10k: Store.Merge of two histories that diverged by
// 10k commits each (about 10k changed records per side, 600 changed on
// both), from the ref at "ours" to the merge commit. Reports seconds per
// merge (the target is at most 2 s) and the records resolved.
func BenchmarkMergeDiverged10k(b *testing.B) {
	dir := copyRepo(b, divergedRepo(b))
	s := openBench(b, dir)
	ctx := context.Background()
	ours := gitstatetest.Git(b, dir, "rev-parse", "refs/heads/ours")
	theirs := gitstatetest.Git(b, dir, "rev-parse", "refs/heads/theirs")
	var total time.Duration
	var resolved int
	n := 0
	for b.Loop() {
		b.StopTimer()
		gitstatetest.Git(b, dir, "update-ref", gitstate.RefState, ours)
		b.StartTimer()
		start := time.Now()
		res, err := s.Merge(ctx, theirs, clockResolver, finishMeta)
		total += time.Since(start)
		n++
		if err != nil {
			b.Fatal(err)
		}
		if res.Status != gitstate.MergeMerged {
			b.Fatalf("status %s", res.Status)
		}
		resolved = len(res.Report.Resolved)
	}
	b.ReportMetric(total.Seconds()/float64(n), "s/merge")
	b.ReportMetric(float64(resolved), "resolved")
}

// BenchmarkSyncNoop: Store.Sync against a local bare remote when neither
// side has anything new (the remote is a directory: git's transfer is a
// local pipe). Reports milliseconds per sync.
func BenchmarkSyncNoop(b *testing.B) {
	dir := newStateRepo(b)
	remote := filepath.Join(b.TempDir(), "remote.git")
	gitstatetest.Git(b, os.TempDir(), "init", "-q", "--bare", remote)
	gitstatetest.Git(b, dir, "remote", "add", "origin", remote)
	s := openBench(b, dir)
	ctx := context.Background()
	opts := gitstate.SyncOptions{Resolve: clockResolver, Finish: finishMeta, Push: true}
	if _, err := s.Sync(ctx, "origin", opts); err != nil {
		b.Fatal(err)
	}
	var durs []time.Duration
	for b.Loop() {
		start := time.Now()
		res, err := s.Sync(ctx, "origin", opts)
		durs = append(durs, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		if res.Merge.Status != gitstate.MergeUpToDate {
			b.Fatalf("no-op sync: %+v", res)
		}
	}
	reportPercentiles(b, durs)
}

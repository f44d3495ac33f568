package work

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tmux"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
	"github.com/gitcodex/git-codex/tools/review"
)

// Benchmarks of the instance tools (targets from the issue, not asserted):
// spawn to a live pane <= 300 ms beside the agent's own start, request_review
// <= 400 ms, ps of 200 instances <= 50 ms, and another agent's mail_send
// delayed by no more than 5 ms while spawns run.

const benchHuman = "human:bench@example.com"

// instanceBench is a repository with state, a launcher that starts at
// once (`cat`), and a private tmux server.
func instanceBench(b *testing.B) (*gitstate.Store, *tools.Registry, string) {
	b.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		b.Skip("tmux not on PATH")
	}
	dir := gitstatetest.NewRepo(b)
	gitstatetest.Git(b, dir, "commit", "-q", "--allow-empty", "-m", "base")
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	sock, err := os.MkdirTemp("", "cxb")
	if err != nil {
		b.Fatal(err)
	}
	tm := tmux.Runner{Socket: filepath.Join(sock, "s"), Config: "/dev/null"}
	b.Cleanup(func() { tm.KillServer(context.Background()); os.RemoveAll(sock) })
	reg := Builtin().WithEnv(tools.Env{Tmux: tm})
	ctx := context.Background()
	if _, err := tools.NewRegistry(tools.Catalog{}).Init(ctx, st, tools.Origin{ID: benchHuman}); err != nil {
		b.Fatal(err)
	}
	for _, args := range []string{
		`{"key":"agent.cat.command","value":"sh -c 'exec cat'"}`, `{"key":"agent.default","value":"cat"}`,
		`{"key":"review.max_iterations","value":"1000000"}`,
	} {
		mustCall(b, reg, st, benchHuman, "config_set", args)
	}
	mustCall(b, reg, st, benchHuman, "agent_register", `{"id":"alice","type":"worker"}`)
	return st, reg, dir
}

func mustCall(b *testing.B, reg *tools.Registry, st *gitstate.Store, caller, tool, args string) tools.Result {
	b.Helper()
	r := reg.CallAs(context.Background(), st, tools.Origin{ID: caller}, tool, json.RawMessage(args))
	if !r.OK {
		b.Fatalf("%s %s: %+v", tool, args, r.Error)
	}
	return r
}

func BenchmarkSpawn(b *testing.B) {
	st, reg, _ := instanceBench(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		mustCall(b, reg, st, benchHuman, "spawn", fmt.Sprintf(`{"type":"coding","prompt":"p","name":"s%d"}`, i))
	}
	b.StopTimer()
}

func BenchmarkRequestReview(b *testing.B) {
	st, reg, _ := instanceBench(b)
	r := mustCall(b, reg, st, benchHuman, "spawn", `{"type":"coding","prompt":"p","name":"coder"}`)
	gitstatetest.Git(b, r.Data.(*instance.Spawned).WorktreePath, "commit", "-q", "--allow-empty", "-m", "work")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rr := mustCall(b, reg, st, "coder", "request_review", `{}`)
		b.StopTimer()
		mustCall(b, reg, st, benchHuman, "instance_kill", `{"id":"`+rr.Data.(*review.ReviewRequested).ReviewInstanceID+`"}`)
		b.StartTimer()
	}
}

// BenchmarkPS200 lists 200 instances (records written directly; their
// sessions are looked up on a tmux server that has none of them).
func BenchmarkPS200(b *testing.B) {
	st, reg, _ := instanceBench(b)
	_, err := st.Update(context.Background(), func(tx *gitstate.Tx) error {
		tx.SetMeta(gitstate.Meta{Summary: "200 instances"})
		for i := 0; i < 200; i++ {
			id := fmt.Sprintf("work-%03d", i)
			a := tools.Agent{ID: id, Type: tools.TypeCoding, State: tools.StateIdle, Status: tools.StatusActive, Branch: instance.BranchName(id), TmuxSession: instance.SessionName(id),
				Worktree: "/nowhere/" + id, CreatedAt: tx.Now(), UpdatedAt: tx.Now(), Clock: tx.Clock()}
			if err := tx.Put(tools.AgentPath(id), a); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := mustCall(b, reg, st, benchHuman, "instance_list", `{}`); r.Data.(*instance.InstanceList).Count != 200 {
			b.Fatalf("listed %d", r.Data.(*instance.InstanceList).Count)
		}
	}
}

// BenchmarkMailSendDuringSpawn times another agent's mail_send, alone and
// while spawns run one after another beside it; it reports both p50s.
func BenchmarkMailSendDuringSpawn(b *testing.B) {
	st, reg, _ := instanceBench(b)
	send := func(n int) []time.Duration {
		var d []time.Duration
		for i := 0; i < n; i++ {
			start := time.Now()
			mustCall(b, reg, st, "alice", "mail_send", `{"to_human":true,"subject":"s","body":"b"}`)
			d = append(d, time.Since(start))
		}
		slices.Sort(d)
		return d
	}
	b.ResetTimer()
	alone := send(b.N + 20)
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; !stop.Load(); i++ {
			reg.CallAs(context.Background(), st, tools.Origin{ID: benchHuman}, "spawn", json.RawMessage(fmt.Sprintf(`{"type":"coding","prompt":"p","name":"bg%d"}`, i)))
		}
	}()
	beside := send(b.N + 20)
	stop.Store(true)
	<-done
	b.StopTimer()
	b.ReportMetric(float64(alone[len(alone)/2].Microseconds())/1000, "ms-p50-alone")
	b.ReportMetric(float64(beside[len(beside)/2].Microseconds())/1000, "ms-p50-beside-spawns")
}

package app

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkWriteOnLongHistory is issue 27's side by side: a write as a
// process (`git-codex call mail_send`, as an agent) on copies of the
// states GIT_CODEX_WRITE_STATES names (name=dir, comma-separated, e.g.
// "7d=/work/simweek/clone0-168h,64k=/tmp/bigstate-30d") and on an empty
// state made by the same binary (git init, init, the same agents), one
// write on each per round, the order turning every round, b.N rounds
// (-benchtime 60x). A state's figures are the medians of its writes' wall
// time and CPU (user and system, of the process and of what it waited
// for; the background repack a write starts is not waited for), their
// quartiles in the log, and the ratio of each median to the empty
// state's. The copies get git's default fsync and gc settings whatever
// the originals had (the simulation turns fsync off), so every state pays
// the same durability steps. Skipped without GIT_CODEX_WRITE_STATES.
func BenchmarkWriteOnLongHistory(b *testing.B) {
	spec := os.Getenv("GIT_CODEX_WRITE_STATES")
	if spec == "" {
		b.Skip("GIT_CODEX_WRITE_STATES names no states (name=dir,...) to write on")
	}
	bin := buildBinary(b)
	root := b.TempDir()
	type state struct {
		name, dir, token string
		wall, cpu        []float64
	}
	states := []*state{{name: "empty", dir: filepath.Join(root, "empty")}}
	git := func(dir string, args ...string) {
		b.Helper()
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run := func(dir, caller, token string, args ...string) ([]byte, error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = benchEnv()
		if caller != "" {
			cmd.Env = append(cmd.Env, "CODEX_INSTANCE="+caller, "CODEX_TOKEN="+token)
		}
		return cmd.CombinedOutput()
	}
	git(root, "init", "-q", states[0].dir)
	if out, err := run(states[0].dir, "", "", "init"); err != nil {
		b.Fatalf("init: %v\n%s", err, out)
	}
	for _, kv := range strings.Split(spec, ",") {
		name, src, ok := strings.Cut(kv, "=")
		if !ok {
			b.Fatalf("GIT_CODEX_WRITE_STATES: %q is not name=dir", kv)
		}
		s := &state{name: name, dir: filepath.Join(root, name)}
		if out, err := exec.Command("cp", "-a", src, s.dir).CombinedOutput(); err != nil {
			b.Fatalf("copy %s: %v\n%s", src, err, out)
		}
		for _, key := range []string{"core.fsync", "gc.autoDetach", "gc.cruftPacks"} {
			exec.Command("git", "-C", s.dir, "config", "--unset", key).Run() // absent: fine
		}
		states = append(states, s)
	}
	for _, s := range states {
		git(s.dir, "config", "user.name", "Bench")
		git(s.dir, "config", "user.email", "bench@example.com")
		// the recipient, there already in the simulation's states
		run(s.dir, "", "", "call", "agent_register", `{"id":"s00","type":"supervisor"}`)
		out, err := run(s.dir, "", "", "call", "agent_register", `{"id":"wcost","type":"worker"}`)
		var res struct {
			Data struct {
				Token string `json:"token"`
			} `json:"data"`
		}
		if err != nil || json.Unmarshal(out, &res) != nil || res.Data.Token == "" {
			b.Fatalf("%s: register the measuring agent: %v\n%s", s.name, err, out)
		}
		s.token = res.Data.Token
	}
	load0 := loadAverage()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range states {
			s := states[(i+j)%len(states)]
			var before, after syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before)
			start := time.Now()
			out, err := run(s.dir, "wcost", s.token, "call", "mail_send", `{"to":"s00","subject":"measured","body":"a write as a process"}`)
			wall := time.Since(start)
			syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after)
			if err != nil {
				b.Fatalf("%s: mail_send: %v\n%s", s.name, err, out)
			}
			cpu := time.Duration(after.Utime.Nano() - before.Utime.Nano() + after.Stime.Nano() - before.Stime.Nano())
			s.wall = append(s.wall, float64(wall)/float64(time.Millisecond))
			s.cpu = append(s.cpu, float64(cpu)/float64(time.Millisecond))
		}
	}
	b.StopTimer()
	quartiles := func(v []float64) (q1, med, q3 float64) {
		v = slices.Clone(v)
		slices.Sort(v)
		at := func(p float64) float64 { return v[int(p*float64(len(v)-1)+0.5)] }
		return at(0.25), at(0.5), at(0.75)
	}
	_, emptyWall, _ := quartiles(states[0].wall)
	_, emptyCPU, _ := quartiles(states[0].cpu)
	b.Logf("load average %s before, %s after; %d rounds", load0, loadAverage(), b.N)
	for _, s := range states {
		w1, w, w3 := quartiles(s.wall)
		c1, c, c3 := quartiles(s.cpu)
		b.Logf("%-6s wall %5.1f ms (%.1f-%.1f) x%.2f   cpu %5.1f ms (%.1f-%.1f) x%.2f", s.name, w, w1, w3, w/emptyWall, c, c1, c3, c/emptyCPU)
		b.ReportMetric(w, s.name+"-wall-ms")
		b.ReportMetric(c, s.name+"-cpu-ms")
		if s != states[0] {
			b.ReportMetric(w/emptyWall, s.name+"-wall-x")
			b.ReportMetric(c/emptyCPU, s.name+"-cpu-x")
		}
	}
}

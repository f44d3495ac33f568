package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/gitcodex/git-codex/tools/mail"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Benchmarks of what agents and people wait for. Targets (not asserted):
// an MCP mail_send round trip p50 <= 3 ms, `git codex status` as a process
// <= 20 ms, listing an inbox of 100 mails among 100k <= 5 ms.

// buildBinary builds git-codex into a temporary directory and returns its
// path, with the build tags and environment `make` uses
// (GIT_CODEX_BUILD_TAGS, GIT_CODEX_BUILD_ENV, set by `make bench`; static,
// CGO_ENABLED=0, when unset); the benchmark is skipped without a go command.
func buildBinary(b *testing.B) string {
	b.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		b.Skip("no go command to build git-codex with")
	}
	bin := filepath.Join(b.TempDir(), "git-codex")
	cmd := exec.Command(gobin, "build", "-tags", os.Getenv("GIT_CODEX_BUILD_TAGS"), "-o", bin, "github.com/gitcodex/git-codex/cmd/git-codex")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if env := os.Getenv("GIT_CODEX_BUILD_ENV"); env != "" {
		cmd.Env = append(cmd.Env, strings.Fields(env)...)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// benchRepo is a repository with state and the agents alice (worker) and
// boss (supervisor).
func benchRepo(b *testing.B) string {
	b.Helper()
	dir := gitstatetest.NewRepo(b)
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	if _, err := builtin.Registry().Init(ctx, st, tools.Origin{ID: mcpHuman}); err != nil {
		b.Fatal(err)
	}
	reg := builtin.Registry()
	for _, args := range []string{`{"id":"alice","type":"worker"}`, `{"id":"boss","type":"supervisor"}`} {
		if r := reg.CallAs(ctx, st, tools.Origin{ID: mcpHuman}, "agent_register", json.RawMessage(args)); !r.OK {
			b.Fatal(r.Error)
		}
	}
	return dir
}

// benchEnv is the environment for the binary: the test's, without a caller
// identity from outside.
func benchEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CODEX_INSTANCE=") {
			env = append(env, kv)
		}
	}
	return env
}

// reportPercentiles reports the p50 and p99 of the samples in milliseconds.
func reportPercentiles(b *testing.B, samples []time.Duration) {
	b.Helper()
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	at := func(p float64) float64 {
		i := int(p * float64(len(samples)-1))
		return float64(samples[i]) / float64(time.Millisecond)
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

// BenchmarkMailSend is an agent's mail_send. mcp-stdio: through its
// long-lived `git codex mcp` process, the real binary over stdio with the
// go-sdk client. registry: the same call in-process (Registry.Call), the
// floor that the protocol and the process add to.
func BenchmarkMailSend(b *testing.B) {
	args := json.RawMessage(`{"to":"boss","subject":"status","body":"still working on the parser"}`)
	ctx := context.Background()
	b.Run("mcp-stdio", func(b *testing.B) {
		bin := buildBinary(b)
		dir := benchRepo(b)
		cmd := exec.Command(bin, "mcp", "--as", "alice")
		cmd.Dir, cmd.Env, cmd.Stderr = dir, benchEnv(), os.Stderr
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		var samples []time.Duration
		for b.Loop() {
			start := time.Now()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mail_send", Arguments: args})
			samples = append(samples, time.Since(start))
			if err != nil {
				b.Fatal(err)
			}
			if res.IsError {
				b.Fatalf("mail_send refused: %v", res.StructuredContent)
			}
		}
		reportPercentiles(b, samples)
	})
	b.Run("registry", func(b *testing.B) {
		dir := benchRepo(b)
		st, err := gitstate.Open(dir, gitstate.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		reg := builtin.Registry()
		var samples []time.Duration
		for b.Loop() {
			start := time.Now()
			r := reg.CallAs(ctx, st, tools.Origin{ID: "alice"}, "mail_send", args)
			samples = append(samples, time.Since(start))
			if !r.OK {
				b.Fatal(r.Error)
			}
		}
		reportPercentiles(b, samples)
	})
}

// BenchmarkStatusProcess is `git codex status` as a person runs it: a whole
// process, started directly and through git's dispatch.
func BenchmarkStatusProcess(b *testing.B) {
	bin := buildBinary(b)
	dir := benchRepo(b)
	env := benchEnv()
	for i, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			env[i] = "PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + p
		}
	}
	for _, bc := range []struct {
		name string
		argv []string
	}{
		{"direct", []string{bin, "status"}},
		{"git-dispatch", []string{"git", "codex", "status"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var samples []time.Duration
			for b.Loop() {
				cmd := exec.Command(bc.argv[0], bc.argv[1:]...)
				cmd.Dir, cmd.Env = dir, env
				start := time.Now()
				out, err := cmd.CombinedOutput()
				samples = append(samples, time.Since(start))
				if err != nil || !strings.Contains(string(out), "agents: 2") {
					b.Fatalf("%s: %v\n%s", strings.Join(bc.argv, " "), err, out)
				}
			}
			reportPercentiles(b, samples)
		})
	}
}

// inboxBench describes the state BenchmarkInboxListing reads: one recipient
// with inboxMails mails among totalMails. The repository is built once and
// kept under os.TempDir(), named by this version: change it when the layout
// or the records change.
const (
	inboxBenchVersion = "v2"
	inboxMails        = 100
	totalMails        = 100_000
	inboxRecipient    = "target"
)

// BenchmarkInboxListing lists an inbox of 100 mails in a state of 100k
// mails: through Registry.Call (what mail_list_inbox costs an agent,
// including its audit commit) and as a read-only snapshot walk.
func BenchmarkInboxListing(b *testing.B) {
	dir := inboxBenchRepo(b)
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	reg := builtin.Registry()
	args := json.RawMessage(`{"include_read":true}`)

	b.Run("call", func(b *testing.B) {
		var samples []time.Duration
		for b.Loop() {
			start := time.Now()
			r := reg.CallAs(ctx, st, tools.Origin{ID: inboxRecipient}, "mail_list_inbox", args)
			samples = append(samples, time.Since(start))
			if !r.OK {
				b.Fatal(r.Error)
			}
			if n := r.Data.(mail.Inbox).Count; n != inboxMails {
				b.Fatalf("listed %d mails, want %d", n, inboxMails)
			}
		}
		reportPercentiles(b, samples)
	})
	b.Run("snapshot-walk", func(b *testing.B) {
		var samples []time.Duration
		for b.Loop() {
			start := time.Now()
			n := 0
			err := st.View(ctx, func(sn *gitstate.Snapshot) error {
				return sn.Walk("mail/"+inboxRecipient, func(path string, data []byte) error {
					var m mail.Mail
					n++
					return json.Unmarshal(data, &m)
				})
			})
			samples = append(samples, time.Since(start))
			if err != nil || n != inboxMails {
				b.Fatalf("walked %d mails (%v), want %d", n, err, inboxMails)
			}
		}
		reportPercentiles(b, samples)
	})
}

// inboxBenchRepo returns the cached benchmark repository, building it first
// if needed (about a minute): mail for 1000 recipients, written in big
// transactions directly as mail.Mail records at their paths, then packed.
func inboxBenchRepo(b *testing.B) string {
	b.Helper()
	dir := filepath.Join(os.TempDir(), "git-codex-bench", "inbox-"+inboxBenchVersion)
	if _, err := os.Stat(filepath.Join(dir, ".git", "codex-bench-ready")); err == nil {
		return dir
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		b.Fatal(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "building-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	b.Logf("building %d mails in %s (once; kept for later runs)", totalMails, dir)
	start := time.Now()
	gitstatetest.Git(b, tmp, "init", "-q", "-b", "main")
	gitstatetest.Git(b, tmp, "config", "gc.autoDetach", "false")
	st, err := gitstate.Open(tmp, gitstate.Options{PackEvery: -1})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := builtin.Registry().Init(ctx, st, tools.Origin{ID: mcpHuman}); err != nil {
		b.Fatal(err)
	}
	reg := builtin.Registry()
	for _, args := range []string{`{"id":"` + inboxRecipient + `","type":"worker"}`, `{"id":"sender","type":"worker"}`} {
		if r := reg.CallAs(ctx, st, tools.Origin{ID: mcpHuman}, "agent_register", json.RawMessage(args)); !r.OK {
			b.Fatal(r.Error)
		}
	}
	const recipients, perTx = 1000, 20_000
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for first := 0; first < totalMails; first += perTx {
		_, err := st.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(gitstate.Meta{Summary: fmt.Sprintf("bench: seed mails %d..%d", first, first+perTx-1),
				Trailers: []gitstate.Trailer{{Key: gitstate.TrailerTool, Value: "bench-seed"}}})
			for i := first; i < first+perTx && i < totalMails; i++ {
				// every 1000th mail goes to the target: 100 in all
				to := fmt.Sprintf("r%03d", i%recipients)
				if i%recipients == 0 {
					to = inboxRecipient
				}
				at := t0.Add(time.Duration(i) * time.Second)
				m := mail.Mail{
					ID: gitstate.NewID("m", at), From: "sender", FromType: tools.TypeWorker, To: to,
					Subject: fmt.Sprintf("report %d", i), Body: "progress report: parser done, tests green, next the lexer",
					CreatedAt: at, Clock: tx.Clock(),
				}
				if err := tx.Put("mail/"+to+"/"+gitstate.Fanout(m.ID)+"/"+m.ID+".json", m); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	st.Close()
	gitstatetest.Git(b, tmp, "gc", "-q")
	if err := os.WriteFile(filepath.Join(tmp, ".git", "codex-bench-ready"), []byte(inboxBenchVersion+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		b.Fatal(err)
	}
	b.Logf("built in %v", time.Since(start).Round(time.Second))
	return dir
}

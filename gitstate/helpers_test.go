package gitstate_test

// Shared helpers for the concurrency, crash, property and benchmark tests:
// TestMain, the writer subprocess (the test binary re-executed with
// GITSTATE_TEST_WRITER=1) and small git/assertion helpers.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// Environment of the writer subprocess.
const (
	envWriter      = "GITSTATE_TEST_WRITER"       // "1": run writerMain instead of the tests
	envRepo        = "GITSTATE_TEST_REPO"         // repository to write to
	envName        = "GITSTATE_TEST_NAME"         // writer name, the <writer> path component
	envCount       = "GITSTATE_TEST_COUNT"        // writes to make; 0 means until killed
	envLockTimeout = "GITSTATE_TEST_LOCK_TIMEOUT" // Options.LockTimeout (time.ParseDuration)
	envPackEvery   = "GITSTATE_TEST_PACK_EVERY"   // Options.PackEvery
	envReads       = "GITSTATE_TEST_READS"        // reads (transactions that change nothing) after each write
	envWaitGo      = "GITSTATE_TEST_WAIT_GO"      // "1": after "ready", wait for a line on stdin
	envHang        = "GITSTATE_TEST_HANG"         // swap stage at which to announce and hang forever
	envNoLink      = "GITSTATE_TEST_NO_LINK"      // "1": hard links fail, as on filesystems without them
	envCPUProfile  = "GITSTATE_TEST_CPUPROFILE"   // write a CPU profile of the writes to <value>.<name>
	envLatency     = "GITSTATE_TEST_LATENCY"      // "1": print "lat <ns>" after each ack, the Update's duration
	envPhases      = "GITSTATE_TEST_PHASES"       // "1": print "ph <stage>=<ns> ..." after each ack: time to reach each stage from the one before
)

// noHardLinks makes the store's hard links fail with EPERM, and counts the
// attempts.
func noHardLinks(s *gitstate.Store) *atomic.Int64 {
	var n atomic.Int64
	s.SetLinkFunc(func(oldname, newname string) error {
		n.Add(1)
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: syscall.EPERM}
	})
	return &n
}

func TestMain(m *testing.M) {
	if os.Getenv(envWriter) == "1" {
		os.Exit(writerMain())
	}
	os.Exit(m.Run())
}

// writerPath is where writer w puts its i-th record.
func writerPath(w string, i int) string {
	return fmt.Sprintf("w/%s/%02x/%d.json", w, i%16, i)
}

type writerRec struct {
	Writer string `json:"writer"`
	I      int    `json:"i"`
}

// writerMain is the body of a writer subprocess. Protocol on stdout, one line
// each: "ready" once the store is open, "ack <path>" after each Update
// returned nil (written with one unbuffered write(2), so a line the parent
// reads is a write the writer saw acknowledged), "hang <stage>" when a
// GITSTATE_TEST_HANG stage is reached. Errors go to stderr with exit code 1.
func writerMain() int {
	name := os.Getenv(envName)
	count, _ := strconv.Atoi(os.Getenv(envCount))
	opts := gitstate.Options{}
	if d, err := time.ParseDuration(os.Getenv(envLockTimeout)); err == nil {
		opts.LockTimeout = d
	}
	if n, err := strconv.Atoi(os.Getenv(envPackEvery)); err == nil {
		opts.PackEvery = n
	}
	s, err := gitstate.Open(os.Getenv(envRepo), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "writer:", err)
		return 1
	}
	if os.Getenv(envNoLink) == "1" {
		noHardLinks(s)
	}
	if stage := os.Getenv(envHang); stage != "" {
		s.SetSwapHook(func(st string) {
			if st == stage {
				os.Stdout.WriteString("hang " + st + "\n")
				select {} // wait to be killed
			}
		})
	}
	defer s.Close()
	os.Stdout.WriteString("ready\n")
	if os.Getenv(envWaitGo) == "1" {
		bufio.NewReader(os.Stdin).ReadString('\n')
	}
	if prefix := os.Getenv(envCPUProfile); prefix != "" {
		f, err := os.Create(prefix + "." + name)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer pprof.StopCPUProfile()
		}
	}
	ctx := context.Background()
	latency := os.Getenv(envLatency) == "1"
	reads, _ := strconv.Atoi(os.Getenv(envReads))
	var phases strings.Builder
	var last time.Time
	if os.Getenv(envPhases) == "1" {
		s.SetPhaseHook(func(ph string) {
			now := time.Now()
			fmt.Fprintf(&phases, " %s=%d", ph, now.Sub(last).Nanoseconds())
			last = now
		})
	}
	for i := 0; count == 0 || i < count; i++ {
		p := writerPath(name, i)
		phases.Reset()
		start := time.Now()
		last = start
		_, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(gitstate.Meta{Summary: "write " + p, Trailers: []gitstate.Trailer{
				{Key: gitstate.TrailerTool, Value: "test_write"},
				{Key: gitstate.TrailerActor, Value: name},
				{Key: gitstate.TrailerResult, Value: "ok"},
				{Key: gitstate.TrailerTarget, Value: p},
			}})
			return tx.Put(p, writerRec{Writer: name, I: i})
		})
		if err != nil {
			fmt.Fprintf(os.Stderr, "writer %s: update %d: %v\n", name, i, err)
			return 1
		}
		took := time.Since(start)
		if _, err := os.Stdout.WriteString("ack " + p + "\n"); err != nil {
			return 1
		}
		for range reads {
			if _, err := s.Update(ctx, func(tx *gitstate.Tx) error {
				tx.SetMeta(gitstate.Meta{Summary: "read " + p, Trailers: []gitstate.Trailer{
					{Key: gitstate.TrailerTool, Value: "test_read"},
					{Key: gitstate.TrailerActor, Value: name},
					{Key: gitstate.TrailerResult, Value: "ok"},
				}})
				var r writerRec
				return tx.Get(p, &r)
			}); err != nil {
				fmt.Fprintf(os.Stderr, "writer %s: read after %d: %v\n", name, i, err)
				return 1
			}
		}
		if latency {
			os.Stdout.WriteString("lat " + strconv.FormatInt(took.Nanoseconds(), 10) + "\n")
		}
		if phases.Len() > 0 {
			os.Stdout.WriteString("ph" + phases.String() + "\n")
		}
	}
	return 0
}

// writerProc is a running writer subprocess.
type writerProc struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr strings.Builder
	ready  chan struct{}   // closed on "ready"
	hung   chan string     // receives the stage of a "hang" line
	done   chan struct{}   // closed once stdout hit EOF
	mu     sync.Mutex      // guards acks
	acks   []string        // acknowledged paths, in order
	lats   []time.Duration // with GITSTATE_TEST_LATENCY: each write's duration
	phases []string        // with GITSTATE_TEST_PHASES: each write's "ph" line
	errs   chan error      // Wait's result, after done
}

// startWriter starts a writer subprocess on repo. env adds or overrides
// variables (KEY=VALUE).
func startWriter(t testing.TB, repo, name string, count int, env ...string) *writerProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		envWriter+"=1",
		envRepo+"="+repo,
		envName+"="+name,
		envCount+"="+strconv.Itoa(count),
	)
	cmd.Env = append(cmd.Env, env...)
	w := &writerProc{name: name, cmd: cmd, ready: make(chan struct{}), hung: make(chan string, 1),
		done: make(chan struct{}), errs: make(chan error, 1)}
	cmd.Stderr = &w.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(w.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "ready":
				close(w.ready)
			case strings.HasPrefix(line, "ack "):
				w.mu.Lock()
				w.acks = append(w.acks, strings.TrimPrefix(line, "ack "))
				w.mu.Unlock()
			case strings.HasPrefix(line, "lat "):
				if ns, err := strconv.ParseInt(strings.TrimPrefix(line, "lat "), 10, 64); err == nil {
					w.mu.Lock()
					w.lats = append(w.lats, time.Duration(ns))
					w.mu.Unlock()
				}
			case strings.HasPrefix(line, "ph "):
				w.mu.Lock()
				w.phases = append(w.phases, strings.TrimPrefix(line, "ph "))
				w.mu.Unlock()
			case strings.HasPrefix(line, "hang "):
				w.hung <- strings.TrimPrefix(line, "hang ")
			}
		}
	}()
	go func() {
		<-w.done
		w.errs <- cmd.Wait()
	}()
	return w
}

// wait waits for the writer to exit (after its stdout closed) and returns
// Wait's error.
func (w *writerProc) wait(timeout time.Duration) error {
	select {
	case err := <-w.errs:
		w.errs <- err
		return err
	case <-time.After(timeout):
		w.cmd.Process.Kill()
		return fmt.Errorf("writer %s did not exit within %s", w.name, timeout)
	}
}

func (w *writerProc) acked() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.acks...)
}

func (w *writerProc) kill() { w.cmd.Process.Kill() }

// waitReady waits for the writer's "ready" line.
func (w *writerProc) waitReady(t testing.TB, timeout time.Duration) {
	t.Helper()
	select {
	case <-w.ready:
	case <-w.done:
		err := w.wait(5 * time.Second)
		t.Fatalf("writer %s exited before ready (%v): %s", w.name, err, w.stderr.String())
	case <-time.After(timeout):
		w.kill()
		t.Fatalf("writer %s not ready within %s", w.name, timeout)
	}
}

// newStateRepo makes a repository with initialised state (one commit holding
// config/version.json) and returns its path.
func newStateRepo(t testing.TB) string {
	t.Helper()
	dir := gitstatetest.NewRepo(t)
	s, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Init(context.Background(), func(tx *gitstate.Tx) error {
		tx.SetMeta(meta("init"))
		return tx.Put("config/version.json", rec{N: 1})
	}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// tipRecords walks the whole state at the tip with a fresh Store and returns
// path -> content.
func tipRecords(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	s, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := map[string][]byte{}
	err = s.View(context.Background(), func(sn *gitstate.Snapshot) error {
		return sn.Walk("", func(p string, b []byte) error {
			out[p] = b
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// gitTreePaths lists the files of rev's tree with `git ls-tree -r`.
func gitTreePaths(t testing.TB, dir, rev string) []string {
	t.Helper()
	out := gitstatetest.Git(t, dir, "ls-tree", "-r", "--name-only", "-z", rev)
	var paths []string
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	return paths
}

// assertHealthy checks what every test ends with: a linear history of want
// commits on the state ref, fsck --full --strict clean, no ref lock left and
// no swap in progress.
func assertHealthy(t testing.TB, dir string, wantCommits int) {
	t.Helper()
	if want := strconv.Itoa(wantCommits); wantCommits > 0 {
		if got := gitstatetest.Git(t, dir, "rev-list", "--count", gitstate.RefState); got != want {
			t.Errorf("rev-list --count = %s, want %s", got, want)
		}
	}
	if got := gitstatetest.Git(t, dir, "rev-list", "--merges", gitstate.RefState); got != "" {
		t.Errorf("merge commits in state history: %s", got)
	}
	if out, err := gitstatetest.GitErr(dir, "fsck", "--full", "--strict", "--no-dangling"); err != nil {
		t.Errorf("git fsck --full --strict: %v\n%s", err, out)
	}
	common := gitstatetest.Git(t, dir, "rev-parse", "--git-common-dir")
	if !filepath.IsAbs(common) {
		common = filepath.Join(dir, common)
	}
	if _, err := os.Stat(filepath.Join(common, "refs", "codex", "state.lock")); err == nil {
		t.Errorf("refs/codex/state.lock left behind")
	}
	if b, err := os.ReadFile(filepath.Join(common, "codex", "writer.lock")); err == nil && len(b) != 0 {
		t.Errorf("writer lock marker left behind: %q", b)
	}
}

// commonDir returns a repository's common git dir.
func commonDir(t testing.TB, dir string) string {
	t.Helper()
	common := gitstatetest.Git(t, dir, "rev-parse", "--git-common-dir")
	if !filepath.IsAbs(common) {
		common = filepath.Join(dir, common)
	}
	return common
}

// gitCatBlob returns a blob's exact bytes (GitErr trims output).
func gitCatBlob(dir, rev string) ([]byte, error) {
	cmd := exec.Command("git", "cat-file", "blob", rev)
	cmd.Dir = dir
	return cmd.Output()
}

// jsonIndent encodes the way Tx.Put does: two-space indent, trailing newline.
func jsonIndent(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc
}

package ui

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools/builtin"
)

// BenchmarkFirstStateOfAProcess is what a freshly started `git codex ui`
// does first (issue 27): a new store (a process's memory starts empty) and
// its first /api/state, on a copy of the state GIT_CODEX_VIEWS_STATE names
// (say /tmp/bigstate-30d, TestMakeBigState's month). Each op starts with
// the parts a server that ran before left (.git/codex/reduced), made of
// the tip, or of GIT_CODEX_VIEWS_KEPTAT (a revision: say
// refs/codex/state~4500, a day before the month's tip, so each op reads
// what changed since); GIT_CODEX_VIEWS_NOKEEP=1: with none, as on a
// machine that never served the page. With GIT_CODEX_VIEWS_AT (a time)
// each op also asks ?at= it, as the page's history slider does (its
// /api/state, again, and its /api/events?limit=50, the page's other
// request); GIT_CODEX_VIEWS_ATKEPT=1: the server that kept the parts
// asked that ?at= too (a past state's parts are kept apart from the
// tip's: gitstate.KeepParts.ReadOnly), as when a person looks at a state
// a server looked at before. GIT_CODEX_VIEWS_PROFILE names a CPU profile
// of the ops alone.
func BenchmarkFirstStateOfAProcess(b *testing.B) {
	src := os.Getenv("GIT_CODEX_VIEWS_STATE")
	if src == "" {
		b.Skip("GIT_CODEX_VIEWS_STATE names no state")
	}
	dir := filepath.Join(b.TempDir(), "state")
	if out, err := exec.Command("cp", "-a", src, dir).CombinedOutput(); err != nil {
		b.Fatalf("copy %s: %v\n%s", src, err, out)
	}
	b.Setenv("TMUX_TMPDIR", b.TempDir()) // a tmux server of its own: none runs there
	at := os.Getenv("GIT_CODEX_VIEWS_AT")
	ctx := context.Background()
	reg := builtin.Registry()
	serve := func() (*gitstate.Store, func(string)) {
		st, err := gitstate.Open(dir, gitstate.Options{})
		if err != nil {
			b.Fatal(err)
		}
		srv, err := New(Options{Store: st, Registry: reg, Caller: "human:b@example.com"})
		if err != nil {
			b.Fatal(err)
		}
		h := srv.Handler()
		return st, func(path string) {
			req := httptest.NewRequestWithContext(ctx, "GET", path, nil)
			req.Host = "127.0.0.1"
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
			}
		}
	}
	kept := filepath.Join(dir, ".git", "codex", "reduced")
	saved := filepath.Join(b.TempDir(), "reduced")
	nokeep := os.Getenv("GIT_CODEX_VIEWS_NOKEEP") != ""
	if !nokeep {
		tip := gitOut(b, dir, "rev-parse", gitstate.RefState)
		if rev := os.Getenv("GIT_CODEX_VIEWS_KEPTAT"); rev != "" {
			gitOut(b, dir, "update-ref", gitstate.RefState, gitOut(b, dir, "rev-parse", rev))
		}
		st, get := serve()
		get("/api/state")
		if at != "" && os.Getenv("GIT_CODEX_VIEWS_ATKEPT") != "" {
			get("/api/state?at=" + url.QueryEscape(at))
		}
		st.Close()
		gitOut(b, dir, "update-ref", gitstate.RefState, tip)
		if out, err := exec.Command("cp", "-a", kept, saved).CombinedOutput(); err != nil {
			b.Fatalf("%v %s", err, out)
		}
	}
	if file := os.Getenv("GIT_CODEX_VIEWS_PROFILE"); file != "" {
		f, err := os.Create(file)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		os.RemoveAll(kept)
		if !nokeep {
			if out, err := exec.Command("cp", "-a", saved, kept).CombinedOutput(); err != nil {
				b.Fatalf("%v %s", err, out)
			}
		}
		b.StartTimer()
		opCPU := selfCPU(b)
		st, get := serve()
		// wall clock and this process's CPU time (user and system) of a request
		timed := func(path string) string {
			began, cpu := time.Now(), selfCPU(b)
			get(path)
			return fmt.Sprintf("%s (CPU %s)", time.Since(began).Round(time.Millisecond), (selfCPU(b) - cpu).Round(time.Millisecond))
		}
		line := fmt.Sprintf("op %d: first /api/state %s", i, timed("/api/state"))
		if at != "" {
			line += ", ?at= " + timed("/api/state?at="+url.QueryEscape(at))
			line += ", again " + timed("/api/state?at="+url.QueryEscape(at))
			line += ", events ?at= " + timed("/api/events?limit=50&at="+url.QueryEscape(at))
		}
		st.Close() // (waits for what the store writes aside)
		b.Log(line + fmt.Sprintf("; the op's CPU, Close included, %s", (selfCPU(b)-opCPU).Round(time.Millisecond)))
	}
}

func gitOut(b testing.TB, dir string, args ...string) string {
	b.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		b.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

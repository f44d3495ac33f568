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
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools/builtin"
)

// BenchmarkFirstStateOfAProcess is what a freshly started `git codex ui`
// does first (issue 27): a new store (a process's memory starts empty) and
// its first /api/state, on a copy of the state GIT_CODEX_VIEWS_STATE names
// (say /tmp/bigstate-30d, TestMakeBigState's month). With
// GIT_CODEX_VIEWS_AT (a time) each op also asks ?at= it, as the page's
// history slider does. Files the store keeps on the machine between
// processes (.git/codex/reduced) stay from one op to the next, as they
// would between two servers; GIT_CODEX_VIEWS_NOKEEP=1 removes them before
// each op, as on a machine that never served the page.
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
	// GIT_CODEX_VIEWS_PROFILE: a CPU profile of the ops (not of the
	// server that ran first to leave the kept parts)
	if file := os.Getenv("GIT_CODEX_VIEWS_PROFILE"); file != "" {
		if os.Getenv("GIT_CODEX_VIEWS_NOKEEP") == "" {
			st, err := gitstate.Open(dir, gitstate.Options{})
			if err != nil {
				b.Fatal(err)
			}
			srv, err := New(Options{Store: st, Registry: reg, Caller: "human:b@example.com"})
			if err != nil {
				b.Fatal(err)
			}
			req := httptest.NewRequestWithContext(ctx, "GET", "/api/state", nil)
			req.Host = "127.0.0.1"
			srv.Handler().ServeHTTP(httptest.NewRecorder(), req)
			st.Close()
		}
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
		if os.Getenv("GIT_CODEX_VIEWS_NOKEEP") != "" {
			b.StopTimer()
			os.RemoveAll(filepath.Join(dir, ".git", "codex", "reduced"))
			b.StartTimer()
		}
		st, err := gitstate.Open(dir, gitstate.Options{})
		if err != nil {
			b.Fatal(err)
		}
		srv, err := New(Options{Store: st, Registry: reg, Caller: "human:b@example.com"})
		if err != nil {
			b.Fatal(err)
		}
		h := srv.Handler()
		get := func(path string) {
			req := httptest.NewRequestWithContext(ctx, "GET", path, nil)
			req.Host = "127.0.0.1"
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
			}
		}
		began := time.Now()
		get("/api/state")
		first := time.Since(began)
		line := fmt.Sprintf("op %d: first /api/state %s", i, first.Round(time.Millisecond))
		if at != "" {
			began = time.Now()
			get("/api/state?at=" + url.QueryEscape(at))
			line += fmt.Sprintf(", ?at= %s", time.Since(began).Round(time.Millisecond))
		}
		b.Log(line)
		st.Close()
	}
}

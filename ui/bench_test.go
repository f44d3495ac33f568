package ui

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools/builtin"
)

// Sizes of issue 17's performance target: the first page with 1,000
// instances and 100,000 events in history in at most 200 ms.
const (
	benchInstances = 1000
	benchEvents    = 100000
)

// bigState builds (once, cached under os.TempDir()) a bare repository
// whose refs/codex/state has benchInstances instances at its tip and
// benchEvents commits of history, with `git fast-import`.
func bigState(b *testing.B) string {
	b.Helper()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("codex-ui-bench-%d-%d-v1", benchInstances, benchEvents))
	if _, err := os.Stat(filepath.Join(dir, "bench-ready")); err == nil {
		return dir
	}
	start := time.Now()
	tmp := fmt.Sprintf("%s.tmp-%d", dir, os.Getpid())
	os.RemoveAll(tmp)
	defer os.RemoveAll(tmp)
	if out, err := exec.Command("git", "init", "-q", "--bare", tmp).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v %s", err, out)
	}
	cmd := exec.Command("git", "fast-import", "--quiet", "--done")
	cmd.Dir = tmp
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(in, 1<<20)
	data := func(s string) { fmt.Fprintf(w, "data %d\n%s\n", len(s), s) }
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for i := 1; i <= benchEvents; i++ {
		fmt.Fprintf(w, "commit refs/codex/state\ncommitter git codex <git-codex@localhost> %d +0000\n", t0+int64(i))
		tool, actor := "mail_send", fmt.Sprintf("work-%04d", i%benchInstances)
		if i%7 == 0 {
			tool = "agent_list"
		}
		data(fmt.Sprintf("%s: event %d\n\nCodex-Tool: %s\nCodex-Actor: %s\nCodex-Result: ok\nCodex-Clock: %d\n", tool, i, tool, actor, i))
		if i == 1 {
			fmt.Fprintf(w, "M 100644 inline config/config.json\n")
			data(`{"entries":{}}`)
			for n := 0; n < benchInstances; n++ {
				id := fmt.Sprintf("work-%04d", n)
				fmt.Fprintf(w, "M 100644 inline agents/%s.json\n", id)
				data(fmt.Sprintf(`{"id":%q,"type":"coding","state":"idle","worktree":"/nowhere/%s","branch":"codex/%s","tmux_session":"codex-%s","status":"ACTIVE","created_by":"human:b@example.com","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","last_active_at":null,"clock":1}`, id, id, id, id))
			}
		}
	}
	fmt.Fprintf(w, "done\n")
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		b.Fatalf("git fast-import: %v: %s", err, stderr.String())
	}
	if out, err := exec.Command("git", "-C", tmp, "pack-refs", "--all").CombinedOutput(); err != nil {
		b.Fatalf("pack-refs: %v %s", err, out)
	}
	os.WriteFile(filepath.Join(tmp, "bench-ready"), nil, 0o644)
	os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		b.Fatal(err)
	}
	b.Logf("built %s in %s; later runs reuse it", dir, time.Since(start).Round(time.Second))
	return dir
}

// BenchmarkFirstPage is what a browser asks for to draw the first page:
// the page, its state (1,000 instances, their tmux sessions looked up)
// and the newest 50 of 100,000 events.
func BenchmarkFirstPage(b *testing.B) {
	dir := bigState(b)
	tmp, err := os.MkdirTemp("", "cxu")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	b.Setenv("TMUX_TMPDIR", tmp) // a tmux server of its own: none runs there
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	srv, err := New(Options{Store: st, Registry: builtin.Registry(), Caller: "human:b@example.com"})
	if err != nil {
		b.Fatal(err)
	}
	h := srv.Handler()
	get := func(path string) int {
		req := httptest.NewRequestWithContext(context.Background(), "GET", path, nil)
		req.Host = "127.0.0.1"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", path, rec.Code, rec.Body.String())
		}
		return rec.Body.Len()
	}
	if n := get("/api/state"); n < benchInstances*100 {
		b.Fatalf("state of %d bytes for %d instances", n, benchInstances)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		get("/")
		get("/api/state")
		get("/api/events?limit=50")
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/first-page")
}

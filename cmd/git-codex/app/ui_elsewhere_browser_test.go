package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/gitcodex/git-codex/ui"
)

// TestUIElsewhereInBrowser renders, in real headless Chromium, the page of
// a clone (b) that synced in an instance another clone (a) runs: its row
// says "elsewhere (<host>)", as `git codex ps` does, and offers none of
// peek, nudge, abandon and kill, which this clone would refuse
// (INSTANCE_ELSEWHERE), but says where to act. An instance b runs itself,
// on the same page, has them all.
func TestUIElsewhereInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	browser := chromium(t)
	privateTmux(t)
	t.Setenv("CODEX_INSTANCE", "")
	host, err := os.Hostname()
	if err != nil || host == "" {
		t.Skipf("no host name (%v): nothing to show", err)
	}
	remote := filepath.Join(t.TempDir(), "remote.git")
	gitstatetest.Git(t, filepath.Dir(remote), "init", "-q", "--bare", remote)
	a := gitstatetest.NewRepo(t)
	gitstatetest.Git(t, a, "commit", "-q", "--allow-empty", "-m", "base")
	gitstatetest.Git(t, a, "remote", "add", "origin", remote)
	gitstatetest.Git(t, a, "push", "-q", "origin", "main")
	for _, args := range [][]string{
		{"init", "--remote", "origin"},
		{"config", "set", "agent.cat.command", "sh -c 'exec cat'"},
		{"config", "set", "agent.default", "cat"},
		{"spawn", "coding", "--name", "far1", "far away"},
		{"sync"},
	} {
		if _, stderr, code := run(t, a, args...); code != 0 {
			t.Fatalf("a: %v: %d %s", args, code, stderr)
		}
	}
	b := filepath.Join(t.TempDir(), "b")
	gitstatetest.Git(t, filepath.Dir(b), "clone", "-q", remote, b)
	t.Cleanup(func() { gitstatetest.WaitForMaintenance(t, b) })
	gitstatetest.Git(t, b, "config", "user.name", "Test User")
	gitstatetest.Git(t, b, "config", "user.email", "test@example.com")
	for _, args := range [][]string{
		{"sync", "origin"},
		{"config", "set", "agent.cat.command", "sh -c 'exec cat'"}, // this machine's setting
		{"spawn", "coding", "--agent", "cat", "--name", "near1", "close by"},
	} {
		if _, stderr, code := run(t, b, args...); code != 0 {
			t.Fatalf("b: %v: %d %s", args, code, stderr)
		}
	}
	// what ps says on b, which the page must say too
	ps, stderr, code := run(t, b, "ps")
	if code != 0 || !strings.Contains(ps, "elsewhere ("+host+")") {
		t.Fatalf("ps on b: %d %s%s", code, ps, stderr)
	}

	st, err := gitstate.Open(b, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := ui.New(ui.Options{Store: st, Registry: builtin.Registry(), Caller: "human:ui@example.com", Token: "tok-456"})
	if err != nil {
		t.Fatal(err)
	}
	url, err := srv.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1280, 1000),
		chromedp.Env("TMPDIR="+t.TempDir()))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelT()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	far, near := `tr[data-agent="far1"]`, `tr[data-agent="near1"]`
	waitText(t, ctx, near+" .status", "ACTIVE", 10*time.Second)
	waitText(t, ctx, far+" .live-elsewhere", "elsewhere ("+host+")", 2*time.Second)

	// the row, cell by cell, and its controls: none on far1's, all four
	// on near1's
	row, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](`(() => {
		const row = id => { const r = document.querySelector('tr[data-agent="' + id + '"]');
			return { cells: [...r.children].map(c => c.textContent), buttons: [...r.querySelectorAll("button")].map(b => b.textContent),
				title: (r.querySelector(".elsewhere") || {}).title || "" } };
		return { far: row("far1"), near: row("near1") } })()`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rows: %v", row)
	farRow, nearRow := row["far"].(map[string]any), row["near"].(map[string]any)
	cells := farRow["cells"].([]any)
	if len(cells) != 8 || cells[0] != "far1" || cells[2] != "ACTIVE" || cells[3] != "elsewhere ("+host+")" || cells[7] != "on "+host {
		t.Fatalf("far1's row: %q", cells)
	}
	if n := len(farRow["buttons"].([]any)); n != 0 {
		t.Fatalf("far1's row offers %v: each would be refused here (INSTANCE_ELSEWHERE)", farRow["buttons"])
	}
	if title := farRow["title"].(string); !strings.Contains(title, host) || !strings.Contains(title, "git codex peek/send/abandon/kill far1") {
		t.Fatalf("far1's note: %q", title)
	}
	if got := nearRow["buttons"].([]any); len(got) != 4 || nearRow["cells"].([]any)[3] != "running" {
		t.Fatalf("near1's row: %v, controls %v", nearRow["cells"], got)
	}
	art := os.Getenv("CODEX_ARTIFACTS")
	if art == "" {
		art = t.TempDir()
	}
	if err := os.MkdirAll(art, 0o755); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, filepath.Join(art, "ui-elsewhere.png"))
	run(t, b, "kill", "near1")
	run(t, a, "kill", "far1")
}

package app

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
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

// chromium finds Debian's headless-capable browser, or skips the test:
// .ci/run installs it, so CI runs this test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH (apt-get install chromium; .ci/run installs it): the browser test of `git codex ui` is skipped")
	return ""
}

// TestUIInBrowser drives the page in real headless Chromium: the token is
// enforced, an instance appears within a second of `git codex spawn`, its
// status changes after request_review, and a screenshot is kept
// ($CODEX_ARTIFACTS, else the test's temp dir).
func TestUIInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	browser := chromium(t)
	privateTmux(t)
	t.Setenv("CODEX_INSTANCE", "")
	dir := gitstatetest.NewRepo(t)
	gitstatetest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
	for _, args := range [][]string{
		{"init"},
		{"config", "set", "agent.cat.command", "sh -c 'exec cat'"},
		{"config", "set", "agent.default", "cat"},
	} {
		if _, stderr, code := run(t, dir, args...); code != 0 {
			t.Fatalf("%v: %d %s", args, code, stderr)
		}
	}
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := ui.New(ui.Options{Store: st, Registry: builtin.Registry(), Caller: "human:ui@example.com", Token: "tok-123"})
	if err != nil {
		t.Fatal(err)
	}
	url, err := srv.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	bare, _, _ := strings.Cut(url, "?")

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1280, 1000),
		// without /dev/shm, Chromium keeps its shared memory in
		// $TMPDIR/org.chromium.Chromium.*, and leaves the directory behind
		chromedp.Env("TMPDIR="+t.TempDir()))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelT()

	// without the token: 401 and nothing of the page
	if err := chromedp.Do(ctx, chromedp.Navigate(bare)); err != nil {
		t.Fatal(err)
	}
	body, err := chromedp.Run(ctx, chromedp.Evaluate[string]("document.body.innerText"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, "UNAUTHORIZED") || strings.Contains(body, "Audit log") {
		t.Fatalf("page without its token: %q", body)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, "#live", "live", 10*time.Second)

	out, stderr, code := run(t, dir, "spawn", "coding", "--name", "coder1", "--json", "add a greeting")
	if code != 0 {
		t.Fatalf("spawn: %d %s", code, stderr)
	}
	spawned := time.Now()
	row := `tr[data-agent="coder1"]`
	waitText(t, ctx, row+" .status", "ACTIVE", time.Second)
	t.Logf("coder1 ACTIVE on the page %s after spawn returned", time.Since(spawned).Round(time.Millisecond))

	var sp struct {
		Data struct {
			WorktreePath string `json:"worktree_path"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &sp); err != nil || sp.Data.WorktreePath == "" {
		t.Fatalf("spawn's answer: %s (%v)", out, err)
	}
	gitstatetest.Git(t, sp.Data.WorktreePath, "commit", "-q", "--allow-empty", "-m", "greeting")
	if _, stderr, code := run(t, dir, "--as", "coder1", "call", "request_review", "{}"); code != 0 {
		t.Fatalf("request_review: %d %s", code, stderr)
	}
	asked := time.Now()
	waitText(t, ctx, row+" .status", "WAITING_REVIEW", time.Second)
	t.Logf("coder1 WAITING_REVIEW on the page %s after request_review returned", time.Since(asked).Round(time.Millisecond))
	waitText(t, ctx, "#reviews-body", "coder1", time.Second)

	// the page acts as the person: mail to the people's inbox, through
	// the form, lands as one mail_send commit by the page's caller
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		const f = document.getElementById("mail-form");
		f.to.value = "coder1"; f.subject.value = "from the page"; f.body.value = "hello";
		f.requestSubmit(); return true })()`)); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, "#act-result", "mail_send: ok", 5*time.Second)
	ev, err := st.Event(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if ev.Get(gitstate.TrailerTool) != "mail_send" || ev.Get(gitstate.TrailerActor) != "human:ui@example.com" {
		t.Fatalf("the page's mail: the tip is %s by %s", ev.Get(gitstate.TrailerTool), ev.Get(gitstate.TrailerActor))
	}
	waitText(t, ctx, "#mail-body", "from the page", 2*time.Second)

	art := os.Getenv("CODEX_ARTIFACTS")
	if art == "" {
		art = t.TempDir()
	}
	if err := os.MkdirAll(art, 0o755); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, filepath.Join(art, "ui.png"))
	// a phone's width: the page still reads (no horizontal scroll of the page itself)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	wide, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		if (document.documentElement.scrollWidth <= window.innerWidth + 1) return "";
		const w = [...document.querySelectorAll("body *")].filter(e => e.closest(".scroll") === null && e.getBoundingClientRect().right > window.innerWidth + 1);
		return w.slice(0, 5).map(e => e.tagName + (e.id ? "#" + e.id : "")).join(" ") })()`))
	if err != nil {
		t.Fatal(err)
	}
	if wide != "" {
		t.Errorf("at a phone's width the page scrolls sideways; too wide: %s", wide)
	}
	screenshot(t, ctx, filepath.Join(art, "ui-phone.png"))
}

func screenshot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if len(shot) < 1000 {
		t.Fatalf("screenshot of %d bytes", len(shot))
	}
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// waitText waits until the element's text contains want, at most within.
func waitText(t *testing.T, ctx context.Context, sel, want string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	var got string
	for {
		q, _ := json.Marshal(sel)
		tctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		var err error
		got, err = chromedp.Run(tctx, chromedp.Evaluate[string]("(document.querySelector("+string(q)+") || {}).textContent || ''"))
		cancel()
		if err == nil && strings.Contains(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %q, want %q within %s (err %v)", sel, got, want, within, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

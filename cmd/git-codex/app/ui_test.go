package app

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestUICommand runs `git codex ui` as a person would: it prints the
// page's URL (with the token given), serves the page and the API there,
// refuses requests without the token, and stops on Ctrl-C.
func TestUICommand(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	t.Setenv("CODEX_INSTANCE", "")
	if _, stderr, code := run(t, dir, "init"); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	var errb strings.Builder
	exited := make(chan int, 1)
	go func() {
		code := Main([]string{"git-codex", "ui", "--addr", "127.0.0.1:0", "--token", "T0k"}, strings.NewReader(""), pw, &errb)
		pw.Close()
		exited <- code
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	os.Chdir(wd)
	if err != nil {
		t.Fatalf("no URL printed: %v (stderr %s)", err, errb.String())
	}
	go io.Copy(io.Discard, pr)
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "git codex ui: ")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/?token=T0k") {
		t.Fatalf("printed %q", line)
	}
	base, _, _ := strings.Cut(url, "?")
	res, err := http.Get(base + "api/state")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %d", res.StatusCode)
	}
	res, err = http.Get(base + "api/events?limit=1&token=T0k")
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Events []struct{ Tool, Actor, Result, Commit string }
	}
	json.NewDecoder(res.Body).Decode(&page)
	res.Body.Close()
	if len(page.Events) != 1 || page.Events[0].Tool != "init" || page.Events[0].Result != "ok" || len(page.Events[0].Commit) != 40 {
		t.Errorf("events: %+v", page)
	}
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	select {
	case code := <-exited:
		if code != 0 {
			t.Errorf("exit %d: %s", code, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ui did not stop on SIGINT")
	}
	if _, err := http.Get(base); err == nil {
		t.Error("the page is still served after the command ended")
	}
}

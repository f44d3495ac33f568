package tmux

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hardValues are environment values tmux's command language would change
// if they were not quoted right: quotes, expansions, escapes, separators,
// a newline followed by blanks (tmux drops them inside quotes), control
// characters, a leading dash, nothing at all.
var hardValues = []string{
	"plain", "two words", "it's", `say "hi"`, "$HOME", "${HOME}x", "~", "~/x", `back\slash`, `end\`,
	"semi;", "; kill-server", "#{pane_id}", "line1\n  line2\n", "\ttab", "-dash", "", "ünïcödé", "\x01ctl\x7f", "%if 1",
	everyByte(),
}

// everyByte is the bytes 1 to 255, in order.
func everyByte() string {
	b := make([]byte, 255)
	for i := range b {
		b[i] = byte(i + 1)
	}
	return string(b)
}

// TestEnvNeverOnCommandLine: a session's environment reaches its pane
// byte for byte, with and without KeepDeadPane, and with no command (the
// default shell), and no value is ever on a tmux client's command line
// (recorded by a tmux wrapper) nor on the server's, which keeps the argv of
// the client that started it.
func TestEnvNeverOnCommandLine(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	r := newRunner(t)
	real, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux not on PATH")
	}
	dir := shortTempDir(t)
	argvLog := filepath.Join(dir, "argv")
	shim := filepath.Join(dir, "tmux")
	if err := os.WriteFile(shim, []byte("#!/bin/sh\nprintf '%s\\n' \"$*\" >> "+argvLog+"\nexec "+real+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.Binary = shim
	secret := fmt.Sprintf("ctok_%d_secret", time.Now().UnixNano())
	env := map[string]string{"SECRET": secret}
	var names []string
	for i, v := range hardValues {
		k := "V" + strconv.Itoa(i)
		env[k] = v
		names = append(names, `"$`+k+`"`)
	}
	want := strings.Join(append([]string{secret}, hardValues...), "\x00") + "\x00"
	for _, keep := range []bool{false, true} {
		out := filepath.Join(dir, fmt.Sprintf("out-%v", keep))
		name := fmt.Sprintf("env-%v", keep)
		mustNewSession(t, ctx, r, SessionSpec{Name: name, Env: env, KeepDeadPane: keep,
			Command: []string{`printf '%s\0' "$SECRET" ` + strings.Join(names, " ") + ` > ` + out + `.tmp && mv ` + out + `.tmp ` + out + `; sleep 60`}})
		got := waitForFile(t, out)
		if got != want {
			t.Errorf("KeepDeadPane %v: the pane saw\n%q\nwant\n%q", keep, got, want)
		}
	}
	// no command: the default shell, started again once its environment is set
	mustNewSession(t, ctx, r, SessionSpec{Name: "shell", Env: map[string]string{"SECRET": secret}})
	out := filepath.Join(dir, "out-shell")
	// typed before the shell is up, it is read once it is
	if err := r.SendKeys(ctx, "shell", `printf '%s' "$SECRET" > `+out+`.tmp && mv `+out+`.tmp `+out, true); err != nil {
		t.Fatal(err)
	}
	if got := waitForFile(t, out); got != secret {
		t.Errorf("the default shell saw SECRET=%q, want %q", got, secret)
	}

	logged, err := os.ReadFile(argvLog)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(logged, []byte("new-session")) {
		t.Fatalf("the wrapper recorded no new-session:\n%s", logged)
	}
	if bytes.Contains(logged, []byte(secret)) || bytes.Contains(logged, []byte("semi;")) {
		t.Errorf("an environment value was on a tmux command line:\n%s", logged)
	}
	pid, err := r.run(ctx, "display-message", "", false, "display-message", "-p", "-t", "=shell:", "#{pid}")
	if err != nil {
		t.Fatal(err)
	}
	cmdline, err := os.ReadFile("/proc/" + strings.TrimSpace(pid) + "/cmdline")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	if bytes.Contains(cmdline, []byte(secret)) {
		t.Errorf("the tmux server's command line holds the secret: %q", cmdline)
	}
}

// waitForFile waits for path to exist and returns what it holds.
func waitForFile(t *testing.T, path string) string {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		if b, err := os.ReadFile(path); err == nil {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

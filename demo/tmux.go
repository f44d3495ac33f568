package demo

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gitcodex/git-codex/tmux"
)

// The demo's agents run on a tmux server of its own, on a socket in a
// directory of its own: never the user's server, and nothing of it left
// once the demo ends.

// privateTmux is the demo's tmux server.
type privateTmux struct {
	dir    string // the socket's directory (removed at the end)
	runner tmux.Runner
}

// scrubbed are the variables the agents' environment never takes from
// the person's: credentials and repositories of their own forge, an agent
// identity, and their own tmux client.
var scrubbed = []string{"GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "GH_HOST", "GH_REPO",
	"GH_CONFIG_DIR", "CODEX_INSTANCE", "CODEX_TOKEN", "CODEX_GITHUB_API_URL", "TMUX", "TMUX_PANE"}

// startTmux starts the server with the agents' environment: the demo's
// own, without the scrubbed variables, plus extra (the stand-in GitHub's
// token). A tmux server hands its global environment to every pane, so
// the token reaches the agents and nothing else (never the state).
func startTmux(ctx context.Context, extra map[string]string) (*privateTmux, error) {
	// a socket path must fit in ~100 bytes: a short directory of its own
	dir, err := os.MkdirTemp("", "cxdemo")
	if err != nil {
		return nil, fmt.Errorf("a directory for the demo's tmux socket: %w", err)
	}
	t := &privateTmux{dir: dir, runner: tmux.Runner{Socket: filepath.Join(dir, "tmux"), Config: "/dev/null"}}
	// a server with no session yet stays up (exit-empty off) until killed
	args := append(t.runner.Args(), "start-server", ";", "set-option", "-s", "exit-empty", "off")
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		args = append(args, ";", "set-environment", "-g", k, extra[k])
	}
	cmd := exec.CommandContext(ctx, "tmux", args...)
	cmd.Env = agentEnv(os.Environ(), extra)
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start a private tmux server (is tmux installed?): %v: %s", err, bytes.TrimSpace(out))
	}
	return t, nil
}

// agentEnv is environ without the scrubbed variables, plus extra.
func agentEnv(environ []string, extra map[string]string) []string {
	var env []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(scrubbed, k) {
			env = append(env, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		env = append(env, k+"="+extra[k])
	}
	return env
}

// stop kills the server and with it every agent, waits until every
// process of it is gone (at most a few seconds, then SIGKILL), and removes
// the socket's directory.
func (t *privateTmux) stop(ctx context.Context) error {
	defer os.RemoveAll(t.dir)
	if err := t.runner.KillServer(ctx); err != nil {
		return fmt.Errorf("stop the demo's tmux server: %w", err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		left := t.leftovers()
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// leftovers are the live processes that belong to the server: the ones
// whose command line names its socket's directory (the server, tmux
// clients, a reviewer's delayed kill of its own session) or whose
// environment does (every process in a pane has TMUX=<socket>,...).
// Empty where /proc cannot be read.
func (t *privateTmux) leftovers() []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		for _, f := range []string{"cmdline", "environ"} {
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), f))
			if err == nil && bytes.Contains(b, []byte(t.dir)) && alive(pid) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// alive reports whether a process exists and is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !os.IsNotExist(err)
	}
	// the state follows the command's closing parenthesis
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] != 'Z'
	}
	return true
}

// sessions lists the sessions on the server.
func (t *privateTmux) sessions(ctx context.Context) []string {
	ss, err := t.runner.List(ctx)
	if err != nil {
		return nil
	}
	var names []string
	for _, s := range ss {
		names = append(names, s.Name)
	}
	return names
}

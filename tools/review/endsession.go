package review

import (
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/gitcodex/git-codex/tmux"
)

// EndSessionCommand is the hidden `git codex` subcommand that kills a tmux
// session, with its panes' whole process trees (tmux.Runner.Kill), after a
// moment: `git-codex end-session [--after D] [--socket S] SESSION`.
//
// A reviewer's send_feedback is served by the git codex mcp inside the
// reviewer's own session, which must answer before the session goes: the
// kill is left to a detached process. tmux's kill-session alone is not
// enough there: Gemini CLI catches its SIGHUP and ran on, with its node
// child and MCP server, after its reviewer was TERMINATED
// (agents_gemini_review.txtar).
const EndSessionCommand = "end-session"

// endSessionLater is the detached process that ends session a second from
// now: this binary's end-session, else (no path to this binary) tmux's
// kill-session from a shell. Its environment drops the instance's identity
// and credential: it acts for nobody.
func endSessionLater(tm tmux.Runner, session string) *exec.Cmd {
	var cmd *exec.Cmd
	if exe, err := os.Executable(); err == nil {
		args := []string{"git-codex", EndSessionCommand, "--after", "1s"}
		if tm.Socket != "" {
			args = append(args, "--socket", tm.Socket)
		}
		cmd = &exec.Cmd{Path: exe, Args: append(args, session)}
	} else {
		args := append(append([]string{}, tm.Args()...), "kill-session", "-t", "="+session)
		cmd = exec.Command("sh", append([]string{"-c", `sleep 1; exec tmux "$@"`, "sh"}, args...)...)
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CODEX_INSTANCE=") && !strings.HasPrefix(kv, "CODEX_TOKEN=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	// not in the reviewer's worktree, which is removed before it runs (git
	// codex could not even find its working directory there)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // outlives its parent
	return cmd
}

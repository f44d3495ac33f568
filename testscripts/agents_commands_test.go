package testscripts

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// agentCommands are the commands of the scripts that run the real agent
// CLIs (agents_*.txtar):
//
//	agentcli NAME
//	    puts the directory of the real agent CLI NAME first on PATH:
//	    $CODEX_AGENT_CLIS/node_modules/.bin (default /opt/codex-agents),
//	    where .ci/run installs the pinned versions, and fails if it is not
//	    there. Guard the script with [!agent:NAME] skip: the condition is
//	    false when NAME is not installed, except on CI (CODEX_AGENT_CLIS
//	    set), where a missing CLI must fail.
//	    Also turns off Claude Code's auto-updater and points every model
//	    API at a closed port on loopback.
//
//	claudehome [-notrust] REPO
//	    writes $HOME/.claude.json as a person's first interactive session
//	    leaves it: onboarding done, the ANTHROPIC_API_KEY it sets approved,
//	    and the workspace of repository REPO trusted (not with -notrust).
//
//	waitproc CMDLINE-REGEXP ENV
//	    waits (20 s) for a live process whose command line matches and
//	    whose environment holds ENV (NAME=VALUE).
func agentCommands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"agentcli":   cmdAgentCLI,
		"claudehome": cmdClaudeHome,
		"waitproc":   cmdWaitProc,
	}
}

const testAnthropicKey = "sk-ant-api03-gitcodex-test-key-0123456789abcdefghij"

// agentBinDir is the directory that holds agent CLI name, or "".
func agentBinDir(name string) string {
	for _, d := range []string{os.Getenv("CODEX_AGENT_CLIS"), "/opt/codex-agents"} {
		if d == "" {
			continue
		}
		bin := filepath.Join(d, "node_modules", ".bin")
		if _, err := os.Stat(filepath.Join(bin, name)); err == nil {
			return bin
		}
	}
	return ""
}

func cmdAgentCLI(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: agentcli NAME")
	}
	bin := agentBinDir(args[0])
	if bin == "" {
		ts.Fatalf("agentcli: %s is not installed in CODEX_AGENT_CLIS=%q or /opt/codex-agents (.ci/run installs it; guard the script with [!agent:%s] skip)", args[0], os.Getenv("CODEX_AGENT_CLIS"), args[0])
	}
	ts.Setenv("PATH", bin+string(os.PathListSeparator)+ts.Getenv("PATH"))
	ts.Setenv("DISABLE_AUTOUPDATER", "1")
	ts.Setenv("ANTHROPIC_API_KEY", testAnthropicKey)
	ts.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
	ts.Setenv("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9")
}

func cmdClaudeHome(ts *testscript.TestScript, neg bool, args []string) {
	trust := true
	if len(args) == 2 && args[0] == "-notrust" {
		trust, args = false, args[1:]
	}
	if len(args) != 1 || neg {
		ts.Fatalf("usage: claudehome [-notrust] REPO")
	}
	repo, err := filepath.Abs(ts.MkAbs(args[0]))
	ts.Check(err)
	if r, err := filepath.EvalSymlinks(repo); err == nil {
		repo = r
	}
	cfg := map[string]any{
		"hasCompletedOnboarding": true,
		"customApiKeyResponses":  map[string]any{"approved": []string{testAnthropicKey[len(testAnthropicKey)-20:]}, "rejected": []string{}},
		"projects":               map[string]any{repo: map[string]any{"hasTrustDialogAccepted": trust}},
	}
	b, _ := json.Marshal(cfg)
	ts.Check(os.WriteFile(filepath.Join(ts.Getenv("HOME"), ".claude.json"), b, 0o600))
}

func cmdWaitProc(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: waitproc CMDLINE-REGEXP NAME=VALUE")
	}
	re, err := regexp.Compile(args[0])
	ts.Check(err)
	want := append([]byte(args[1]), 0)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err != nil || !re.Match(bytes.ReplaceAll(bytes.TrimRight(cmd, "\x00"), []byte{0}, []byte{' '})) {
				continue
			}
			env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			if err == nil && (bytes.HasPrefix(env, want) || bytes.Contains(env, append([]byte{0}, want...))) {
				ts.Logf("waitproc: pid %s", e.Name())
				return
			}
		}
	}
	ts.Fatalf("waitproc: no process matching %q with %s", args[0], args[1])
}

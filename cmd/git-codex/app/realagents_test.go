package app

// Whole delegated turns run by the real agent CLIs (Claude Code 2.1.328,
// Codex CLI 0.169.0, Gemini CLI 0.61.0; .ci/run installs them into
// $CODEX_AGENT_CLIS), each pointed at a stand-in model API on loopback
// (tools/modelapi) that scripts the model: `git codex delegate query`
// as a person types it, its plain output read as a person reads it. A
// test skips when its CLI is not installed, unless CODEX_AGENT_CLIS is
// set (CI), where it fails.

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools/modelapi"
)

// realCLI is the path of an installed agent CLI.
func realCLI(t *testing.T, name string) string {
	t.Helper()
	prefix := os.Getenv("CODEX_AGENT_CLIS")
	for _, d := range []string{prefix, "/opt/codex-agents"} {
		if d == "" {
			continue
		}
		p := filepath.Join(d, "node_modules", ".bin", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if prefix != "" {
		t.Fatalf("%s is not installed in CODEX_AGENT_CLIS=%s (.ci/run installs it)", name, prefix)
	}
	t.Skipf("%s is not installed (set CODEX_AGENT_CLIS, or run .ci/run's install step)", name)
	return ""
}

// delegateRepo is a repository with git codex's state whose launcher for
// agent runs bin with env before it (the machine's setting: git config),
// and a notes file the scripted model reads.
func delegateRepo(t *testing.T, agent, bin string, env ...string) string {
	t.Helper()
	dir := gitstatetest.NewRepo(t)
	t.Setenv("CODEX_INSTANCE", "")
	t.Setenv("CODEX_TOKEN", "")
	if _, stderr, code := run(t, dir, "init"); code != 0 {
		t.Fatalf("init: %d %s", code, stderr)
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("remember the milk\n"), 0o644)
	env = append(env, "DISABLE_AUTOUPDATER=1", "TERM=dumb", "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
	var q []string
	for _, kv := range env {
		q = append(q, "'"+strings.ReplaceAll(kv, "'", `'\''`)+"'")
	}
	gitstatetest.Git(t, dir, "config", "codex.agent."+agent+".command", "env "+strings.Join(q, " ")+" "+bin)
	return dir
}

// plain runs `git codex` in dir and returns what a person sees: stdout
// and stderr together, and the exit status.
func plain(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	out, errOut, code := run(t, dir, args...)
	return out + errOut, code
}

var tokensLine = regexp.MustCompile(`cost: +\$[0-9.]+, \d+ turn\(s\), (\d+) token\(s\)`)

func tokensShown(t *testing.T, out string) string {
	t.Helper()
	m := tokensLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no cost line in:\n%s", out)
	}
	return m[1]
}

// Claude Code: the answer after a tool call, the tokens claude's result
// reported (each model message once, cache reads and writes included:
// 43,060, where git codex used to count its lines' 21,502), and a turn
// stopped at its budget mid-turn, its reason in the plain output. As root
// (here), permission_mode allow is refused by claude itself, and its
// stderr says why.
func TestRealClaudeDelegatedTurns(t *testing.T) {
	claude := realCLI(t, "claude")
	home := t.TempDir()
	api := modelapi.Start(t)
	dir := delegateRepo(t, "claude", claude, append(api.ClaudeEnv(), "HOME="+home)...)
	notes := map[string]any{"file_path": filepath.Join(dir, "notes.txt")}

	api.Script(
		modelapi.Reply{Text: "Let me read the notes.", ToolCalls: []modelapi.ToolCall{{Name: "Read", Args: notes}}, Usage: modelapi.Usage{Input: 500, CacheRead: 20000, CacheWrite: 1000, Output: 40}},
		modelapi.Reply{Text: "The notes say: remember the milk.", Usage: modelapi.Usage{Input: 300, CacheRead: 21000, CacheWrite: 200, Output: 20}},
	)
	out, code := plain(t, dir, "delegate", "query", "--agent", "claude", "what do the notes say?")
	if code != 0 || !strings.Contains(out, "(claude, DONE)") || !strings.Contains(out, "\nThe notes say: remember the milk.\n") {
		t.Fatalf("delegate query: exit %d\n%s", code, out)
	}
	if got := tokensShown(t, out); got != "43060" {
		t.Fatalf("tokens %s, want 43060 (claude's result: 800+42200 cache+1200 written+60 out)\n%s", got, out)
	}

	// budget: the second model call's message takes the turn past 30,000
	// while it still has a tool to call; the turn is stopped there
	api.Script(
		modelapi.Reply{Text: "Reading.", ToolCalls: []modelapi.ToolCall{{Name: "Read", Args: notes}}, Usage: modelapi.Usage{Input: 500, CacheRead: 20000, Output: 40}},
		modelapi.Reply{Text: "Reading again.", ToolCalls: []modelapi.ToolCall{{Name: "Read", Args: notes}}, Usage: modelapi.Usage{Input: 300, CacheRead: 21000, Output: 20}},
		modelapi.Reply{Text: "Never seen."},
	)
	out, code = plain(t, dir, "delegate", "query", "--budget-tokens", "30000", "read them twice")
	if code != 0 || !strings.Contains(out, "(claude, INTERRUPTED)") || !regexp.MustCompile(`partial: budget_tokens \(Budget exceeded: used \d+ of 30000 tokens\)`).MatchString(out) {
		t.Fatalf("budget: exit %d\n%s", code, out)
	}

	if os.Geteuid() == 0 {
		out, code = plain(t, dir, "delegate", "query", "--permission-mode", "allow", "anything")
		if code == 0 || !strings.Contains(out, "AGENT_FAILED") || !strings.Contains(out, "--dangerously-skip-permissions cannot be used with root/sudo privileges") {
			t.Fatalf("allow as root: exit %d\n%s", code, out)
		}
	}
}

// Codex CLI through a model provider whose base_url is the stand-in: the
// answer and the usage of turn.completed; a continued turn counts only
// its own tokens although codex reports the resumed thread's (the
// session's total is both turns'); a turn past its budget runs whole
// and says that codex's budget is enforced between turns; and a model
// API that never answers is stopped at the turn's wall-clock limit, the
// reason in the plain output.
func TestRealCodexDelegatedTurns(t *testing.T) {
	codex := realCLI(t, "codex")
	home := t.TempDir()
	api := modelapi.Start(t)
	os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(api.CodexConfig()), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := delegateRepo(t, "codex", codex, append(api.CodexEnv(), "HOME="+home)...)

	api.Script(modelapi.Reply{Text: "The notes say: remember the milk.", Usage: modelapi.Usage{Input: 1200, CacheRead: 30000, Output: 66}})
	out, code := plain(t, dir, "delegate", "query", "--agent", "codex", "what do the notes say?")
	if code != 0 || !strings.Contains(out, "(codex, DONE)") || !strings.Contains(out, "\nThe notes say: remember the milk.\n") {
		t.Fatalf("delegate query: exit %d\n%s", code, out)
	}
	if got := tokensShown(t, out); got != "31266" {
		t.Fatalf("tokens %s, want 31266\n%s", got, out)
	}
	session := regexp.MustCompile(`session: (dlg-[0-9a-z]+)`).FindStringSubmatch(out)[1]

	api.Script(modelapi.Reply{Text: "Still the milk.", Usage: modelapi.Usage{Input: 300, CacheRead: 31000, Output: 7}})
	out, code = plain(t, dir, "delegate", "continue", session, "and now?")
	if code != 0 || !strings.Contains(out, "\nStill the milk.\n") {
		t.Fatalf("delegate continue: exit %d\n%s", code, out)
	}
	if got := tokensShown(t, out); got != "31307" {
		t.Fatalf("continued turn: tokens %s, want 31307 (its own; codex reported the thread's 62573)\n%s", got, out)
	}
	out, _ = plain(t, dir, "delegate", "list", "--json")
	if !strings.Contains(out, `"tokens_used": 62573`) {
		t.Fatalf("the session's tokens:\n%s", out)
	}

	api.Script(modelapi.Reply{Text: "Done, expensively.", Usage: modelapi.Usage{Input: 5000, Output: 100}})
	out, code = plain(t, dir, "delegate", "query", "--agent", "codex", "--budget-tokens", "1000", "an expensive job")
	if code != 0 || !strings.Contains(out, "(codex, DONE)") || !strings.Contains(out, "\nDone, expensively.\n") ||
		!strings.Contains(out, "note:    budget_tokens (Budget exceeded: used 5100 of 1000 tokens; codex reports usage only at the end of a turn, so budget_tokens is enforced between turns: this turn ran to its end)") {
		t.Fatalf("over budget: exit %d\n%s", code, out)
	}

	api.Script(modelapi.Reply{Hang: true})
	out, code = plain(t, dir, "delegate", "query", "--agent", "codex", "--timeout-seconds", "3", "wait forever")
	if code != 0 || !strings.Contains(out, "(codex, INTERRUPTED)") ||
		!strings.Contains(out, "partial: timeout (Time limit reached: the turn ran longer than 3s (timeout_seconds) and was stopped") {
		t.Fatalf("timeout: exit %d\n%s", code, out)
	}
}

// Gemini CLI at GOOGLE_GEMINI_BASE_URL: the answer is the text after its
// tool call (not the narration before it glued on), the tokens its
// result's stats reported. The folder was never trusted (no trust in the
// settings, no GEMINI_CLI_TRUST_WORKSPACE): the turn's --skip-trust
// trusts it for the run, where gemini alone exits 55 before any output
// (the control, run by hand). A gemini that fails is AGENT_FAILED with its
// stderr's reason, plain.
func TestRealGeminiDelegatedTurns(t *testing.T) {
	gemini := realCLI(t, "gemini")
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".gemini"), 0o700)
	os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(`{"security":{"auth":{"selectedType":"gemini-api-key"}},"general":{"maxAttempts":1}}`), 0o600)
	api := modelapi.Start(t)
	t.Setenv("GEMINI_CLI_TRUST_WORKSPACE", "")
	dir := delegateRepo(t, "gemini", gemini, append(api.GeminiEnv(), "HOME="+home)...)

	api.Script(
		modelapi.Reply{Text: "Let me read the notes first.", ToolCalls: []modelapi.ToolCall{{Name: "read_file", Args: map[string]any{"file_path": "notes.txt"}}}, Usage: modelapi.Usage{Input: 1000, Output: 30}},
		modelapi.Reply{Text: "The notes say: remember the milk.", Usage: modelapi.Usage{Input: 1100, Output: 12}},
	)
	out, code := plain(t, dir, "delegate", "query", "--agent", "gemini", "what do the notes say?")
	if code != 0 || !strings.Contains(out, "(gemini, DONE)") || !strings.HasSuffix(out, "\n\nThe notes say: remember the milk.\n") {
		t.Fatalf("delegate query: exit %d\n%s", code, out)
	}
	// 2,142 for the two scripted calls and 15 for gemini's model router
	if got := tokensShown(t, out); got != "2157" {
		t.Fatalf("tokens %s, want 2157\n%s", got, out)
	}

	// the control: the same gemini in the same folder without the flag
	cmd := exec.Command(gemini, "--prompt=", "--output-format", "stream-json")
	cmd.Dir, cmd.Stdin = dir, strings.NewReader("anything")
	cmd.Env = append(os.Environ(), append(api.GeminiEnv(), "HOME="+home, "GEMINI_CLI_TRUST_WORKSPACE=")...)
	if b, err := cmd.CombinedOutput(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 55 || !strings.Contains(string(b), "not running in a trusted directory") {
		t.Fatalf("gemini without --skip-trust in an untrusted folder: %v\n%s", err, b)
	}

	// a gemini signed in with an API key it is not given: no output at
	// all, its reason from stderr
	t.Setenv("GEMINI_API_KEY", "")
	bad := delegateRepo(t, "gemini", gemini, "GOOGLE_GEMINI_BASE_URL="+api.URL, "HOME="+home)
	out, code = plain(t, bad, "delegate", "query", "--agent", "gemini", "anything")
	if code == 0 || !strings.Contains(out, "AGENT_FAILED: gemini exited with exit status") || !strings.Contains(out, "GEMINI_API_KEY") || strings.Contains(out, "\x1b[") {
		t.Fatalf("gemini without its key: exit %d\n%s", code, out)
	}
}

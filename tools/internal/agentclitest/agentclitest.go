// Package agentclitest runs the real agent CLIs (Claude Code, Codex CLI,
// Gemini CLI) in tests: where they are installed, a private environment
// for them, and a stand-in MCP server named git-codex. It is shared by
// the tests of the launchers (tools/instance) and of the headless turns
// (tools/delegate), which run the same CLIs.
package agentclitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// AgentCLI returns the path of an agent CLI: $CODEX_AGENT_CLIS/node_modules/.bin
// (default /opt/codex-agents), else PATH.
func AgentCLI(t *testing.T, name string) string {
	t.Helper()
	prefix := os.Getenv("CODEX_AGENT_CLIS")
	dirs := []string{prefix, "/opt/codex-agents"}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		p := filepath.Join(d, "node_modules", ".bin", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil && prefix == "" {
		return p
	}
	if prefix != "" {
		t.Fatalf("%s is not installed in CODEX_AGENT_CLIS=%s (.ci/run installs it)", name, prefix)
	}
	t.Skipf("%s is not installed (set CODEX_AGENT_CLIS, or run .ci/run's install step)", name)
	return ""
}

// Env is an environment for a real agent CLI: a private HOME, the
// CLI's own directory first on PATH (Gemini CLI runs on the node beside
// it when there is one), no auto-update, and every model API a closed
// port on loopback.
func Env(t *testing.T, bin string, extra ...string) []string {
	home := t.TempDir()
	env := []string{
		"HOME=" + home,
		"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"DISABLE_AUTOUPDATER=1",
		"ANTHROPIC_BASE_URL=http://127.0.0.1:9",
		"GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:9",
		"TERM=dumb",
	}
	return append(env, extra...)
}

// StandinServer writes an executable named git-codex into a new directory
// and returns that directory: a minimal MCP server over stdio (node) that
// first writes its environment to <dir>/env.<pid>. It stands for git
// codex's server where the test is about the CLI's handling of the config
// (the testscripts run the real one).
func StandinServer(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not on PATH")
	}
	dir := t.TempDir()
	js := `process.stdin.on('data',d=>{for(const l of d.toString().split('\n')){if(!l.trim())continue;const m=JSON.parse(l);` +
		`if(m.method==='initialize')process.stdout.write(JSON.stringify({jsonrpc:'2.0',id:m.id,result:{protocolVersion:m.params.protocolVersion,capabilities:{tools:{}},serverInfo:{name:'standin',version:'1'}}})+'\n');` +
		`else if(m.method==='tools/list')process.stdout.write(JSON.stringify({jsonrpc:'2.0',id:m.id,result:{tools:[{name:'agent_get_status',inputSchema:{type:'object'}}]}})+'\n');` +
		`else if(m.id!==undefined)process.stdout.write(JSON.stringify({jsonrpc:'2.0',id:m.id,result:{}})+'\n')}})`
	script := "#!/bin/sh\nenv > " + shellQuote(dir) + "/env.$$\nexec node -e " + shellQuote(js) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "git-codex"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// ServerEnvs are the environments the stand-in server was started with.
func ServerEnvs(t *testing.T, dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "env.*"))
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err == nil {
			out = append(out, string(b))
		}
	}
	return out
}

// GitInit makes a git repository in dir.
func GitInit(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
}

// shellQuote quotes s for sh: in single quotes, each of its own as '\”.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

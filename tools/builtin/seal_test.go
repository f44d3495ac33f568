package builtin_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// leakedToken is what a delegated agent prints when it ran `env` where
// GH_TOKEN is set.
const leakedToken = "ghp_" + "LEAKEDleakedLEAKEDleakedLEAKED1234"

// reachableObjects is every object reachable from git codex's refs and
// notes, as git cat-file prints them: what a push of them carries.
func reachableObjects(t *testing.T, dir string) string {
	t.Helper()
	objs := gitstatetest.Git(t, dir, "rev-list", "--objects", "--glob=refs/codex/*", "--glob=refs/notes/*")
	var ids []string
	for _, l := range strings.Split(objs, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			ids = append(ids, f[0])
		}
	}
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	all, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) < 10 {
		t.Fatalf("only %d objects scanned", len(ids))
	}
	return string(all)
}

// fakeClaude puts a `claude` on PATH that answers in Claude Code's
// stream-json with text holding a credential (and prints it on stderr),
// as an agent that ran `env` would; exit is its exit status.
func fakeClaude(t *testing.T, exit int) {
	t.Helper()
	dir := t.TempDir()
	script := `#!/bin/sh
cat <<'EOF'
{"type":"system","subtype":"init","session_id":"s-1","model":"claude-sonnet-4-5","permissionMode":"default"}
{"type":"assistant","session_id":"s-1","message":{"role":"assistant","content":[{"type":"text","text":"here is env:\nGH_TOKEN=` + leakedToken + `"}]}}
EOF
echo "warning: GH_TOKEN=` + leakedToken + ` is set" >&2
if [ ` + string(rune('0'+exit)) + ` = 0 ]; then
cat <<'EOF'
{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"here is env:\nGH_TOKEN=` + leakedToken + `\nHOME=/root","session_id":"s-1","total_cost_usd":0.01,"usage":{"input_tokens":1,"output_tokens":1}}
EOF
fi
exit ` + string(rune('0'+exit)) + `
`
	if err := os.WriteFile(filepath.Join(dir, "claude"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestAgentOutputSealed is issue 29 item 5: a delegated agent's answer (it
// ran `env`) was committed verbatim into its delegation record and pushed
// by sync. Every byte that reaches a ref is scanned, whoever produced it:
// the record keeps the answer with the credential redacted, the commit
// says what was taken out (Codex-Redacted), and the call's result warns.
func TestAgentOutputSealed(t *testing.T) {
	for _, tt := range []struct {
		name string
		exit int
	}{{"answer", 0}, {"failure", 1}} {
		t.Run(tt.name, func(t *testing.T) {
			fakeClaude(t, tt.exit)
			e := newEnv(t)
			r := e.call(human, "agent_query", `{"prompt":"run env and tell me what you see"}`)
			if tt.exit == 0 && !r.OK {
				t.Fatalf("agent_query: %+v", r.Error)
			}
			if len(r.Warnings) == 0 || !strings.Contains(strings.Join(r.Warnings, "\n"), "GitHub token") || !strings.Contains(strings.Join(r.Warnings, "\n"), "delegations/") {
				t.Errorf("the result does not say what was redacted: %q", r.Warnings)
			}
			for _, w := range r.Warnings {
				if strings.Contains(w, leakedToken) {
					t.Errorf("a warning repeats the credential: %s", w)
				}
			}
			msg := gitstatetest.Git(t, e.dir, "log", "-1", "--format=%(trailers:key=Codex-Redacted,valueonly)", gitstate.RefState)
			if !regexp.MustCompile(`GitHub token in delegations/[^/]+/[^/]+/dlg-`).MatchString(msg) {
				t.Errorf("Codex-Redacted: %q", msg)
			}
			all := reachableObjects(t, e.dir)
			if strings.Contains(all, leakedToken) || strings.Contains(all, leakedToken[4:]) {
				t.Fatal("the agent's credential is in an object reachable from refs/codex or refs/notes")
			}
			if tt.exit == 0 && !strings.Contains(all, `GH_TOKEN=[redacted: GitHub token]\nHOME=/root`) {
				t.Errorf("the answer is not kept, redacted:\n%s", all)
			}
			fsckClean(t, e.dir)
		})
	}
}

// TestEveryWriteIsSealed: the tools write the state through update (which
// seals every transaction) and nothing else: no other call of the store's
// Update, Init or Restore in the package.
func TestEveryWriteIsSealed(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	direct := regexp.MustCompile(`\.(Update|Init|Restore|Unrecorded)\(ctx`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "seal.go" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if direct.MatchString(line) && !strings.Contains(line, "update(ctx") {
				allowed := (f == "registry.go" || f == "connect.go") && strings.Contains(line, "st.Unrecorded(") || // commits nothing
					f == "entry.go" && strings.Contains(line, "st.Restore(ctx, rev, m)") // its meta sealed (sealMeta); its tree an earlier commit's
				if !allowed {
					t.Errorf("%s:%d writes the state without sealing it: %s", f, i+1, strings.TrimSpace(line))
				}
			}
		}
	}
}

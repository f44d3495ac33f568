package delegate

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"testing"

	"github.com/gitcodex/git-codex/tools/internal/agentclitest"
)

// Codex CLI takes a delegated turn's mcp_servers, given as -c overrides,
// as its config: `codex mcp list --json` shows the server with its
// command, arguments and environment as given, quotes and all, under a
// name that is not a bare TOML key. (The spawn line's overrides:
// TestRealCodexTakesServerConfig in tools/instance.)
func TestRealCodexTakesTurnServers(t *testing.T) {
	codex := agentclitest.AgentCLI(t, "codex")
	dir := t.TempDir()
	env := agentclitest.Env(t, codex)
	list := func(args []string) ([]map[string]any, string, error) {
		cmd := exec.Command(codex, append(args, "mcp", "list", "--json")...)
		cmd.Dir, cmd.Env = dir, env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var servers []map[string]any
		if err == nil {
			err = json.Unmarshal(out, &servers)
		}
		return servers, stderr.String(), err
	}

	// a delegated turn's servers: env values with quotes and a name that
	// is not a bare TOML key
	spec := turnSpec{PermissionMode: "allow", MCPServers: []MCPServerSpec{{Name: "my-tools", Command: "/bin/tool x", Args: []string{"a\"b", "c"}, Env: map[string]string{"K": `v "q" \ w`}}}}
	args, err := codexArgs(spec)
	if err != nil {
		t.Fatal(err)
	}
	var overrides []string
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-c" {
			overrides = append(overrides, args[i], args[i+1])
		}
	}
	servers, stderr, err := list(overrides)
	if err != nil || len(servers) != 1 {
		t.Fatalf("codex %q mcp list: %v %v\n%s", overrides, err, servers, stderr)
	}
	b, _ := json.Marshal(servers[0])
	var d struct {
		Name      string
		Transport struct {
			Command string
			Args    []string
			Env     map[string]string
		}
	}
	json.Unmarshal(b, &d)
	if d.Name != "my-tools" || d.Transport.Command != "/bin/tool x" || !slices.Equal(d.Transport.Args, []string{"a\"b", "c"}) || d.Transport.Env["K"] != `v "q" \ w` {
		t.Fatalf("codex sees the delegated server as %s", b)
	}

}

package tools

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// frameworkFiles are the files of the call framework (issue 26): the
// registry and its pipeline, the call context, errors, auth, policy,
// secrets, effects, config and its keys table, record kinds and their
// merge, claims, the agent record. The nouns (every other file but
// builtin.go, the assembly) build on them; they use no noun.
var frameworkFiles = []string{
	"admit.go", "agent.go", "audit.go", "auth.go", "caller.go", "claim.go", "coderepo.go", "config.go", "configtools.go",
	"credential.go", "doc.go", "effects.go", "entry.go", "env.go", "errors.go", "fieldmerge.go", "github.go",
	"input.go", "kinds.go", "layout.go", "lazyregexp.go", "listing.go", "localconfig.go", "merge.go",
	"permitted.go", "policy.go", "progress.go", "registry.go", "retry.go", "schemanull.go", "seal.go",
	"secrets.go", "timeout.go", "walk.go",
}

// assemblyStub stands in for builtin.go's lists of what the nouns
// register: the only names the framework takes from outside it.
const assemblyStub = `package tools

func Kinds() []Kind                                       { return []Kind{configKind(), agentKind()} }
func nounConfigKeys() []func() []configKey                { return nil }
func nounKeyPatterns() []func(string) (configKey, bool)   { return nil }
`

// TestFrameworkStandsAlone: the framework's files compile without any
// noun's, given only the assembly's lists (kinds, config keys, key
// patterns): the direction the split into packages makes the compiler
// enforce (framework <- nouns <- assembly) holds already.
func TestFrameworkStandsAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the framework")
	}
	dir := t.TempDir()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	stub := filepath.Join(dir, "stub.go")
	if err := os.WriteFile(stub, []byte(assemblyStub), 0o644); err != nil {
		t.Fatal(err)
	}
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(wd, "zz_assembly_stub.go"): stub}})
	ov := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"build", "-overlay", ov, "-o", os.DevNull}, frameworkFiles...)
	args = append(args, "zz_assembly_stub.go")
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("the framework does not compile without the nouns:\n%s", out)
	}
}

package tools

import (
	"os"
	"os/exec"
	"testing"
)

// frameworkFiles are the files of the call framework (issue 26): the
// registry and its pipeline, the call context, errors, auth, policy,
// secrets, effects, config and its keys table, record kinds and their
// merge, claims, the agent record. The nouns (every other file but
// builtin.go, the assembly, which hands them a Catalog) build on them;
// they use no noun.
var frameworkFiles = []string{
	"admit.go", "agent.go", "audit.go", "auth.go", "caller.go", "catalog.go", "claim.go", "coderepo.go", "config.go", "configtools.go", "conflict.go", "connect.go",
	"credential.go", "doc.go", "effects.go", "entry.go", "env.go", "errors.go", "fieldmerge.go", "github.go",
	"input.go", "kinds.go", "layout.go", "lazyregexp.go", "listing.go", "localconfig.go", "merge.go",
	"permitted.go", "policy.go", "progress.go", "registry.go", "retry.go", "schemanull.go", "seal.go",
	"secrets.go", "sync.go", "timeout.go", "walk.go",
}

// TestFrameworkStandsAlone: the framework's files compile without any
// noun's: what it knows of the nouns (their tools, hooks, kinds and config
// keys) it is handed as a Catalog, so the direction the split into
// packages makes the compiler enforce (framework <- nouns <- assembly)
// holds already.
func TestFrameworkStandsAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the framework")
	}
	args := append([]string{"build", "-o", os.DevNull}, frameworkFiles...)
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("the framework does not compile without the nouns:\n%s", out)
	}
}

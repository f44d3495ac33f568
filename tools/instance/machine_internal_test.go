package instance

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gitcodex/git-codex/tools"
)

// RunsHere: an instance that records a machine is this repository's only
// if it is this repository's machine id; one recorded before instances
// kept their machine is judged as before, by its worktree (this
// repository's, or gone: ours; another clone's: not).
func TestRunsHere(t *testing.T) {
	root := t.TempDir()
	git := func(dir string, args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	for _, r := range []string{"a", "b"} {
		git(root, "init", "-q", r)
		git(filepath.Join(root, r), "commit", "-q", "--allow-empty", "-m", "x")
	}
	git(filepath.Join(root, "b"), "worktree", "add", "-q", filepath.Join(root, "b-wt"), "-b", "w")
	ownGitDir := filepath.Join(root, "a", ".git")
	if err := os.MkdirAll(filepath.Join(root, "plain"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(filepath.Join(root, "a"), "worktree", "add", "-q", filepath.Join(root, "a-wt"), "-b", "w")
	for _, tt := range []struct {
		name     string
		a        tools.Agent
		machine  string
		want     bool
		wantElse bool
	}{
		{"this machine", tools.Agent{Machine: "m1", Worktree: filepath.Join(root, "b-wt")}, "m1", true, false},
		{"another machine", tools.Agent{Machine: "m2", Worktree: filepath.Join(root, "a-wt")}, "m1", false, true},
		{"another machine, whose paths are not here", tools.Agent{Machine: "m2", Worktree: filepath.Join(root, "gone")}, "m1", false, true},
		{"old record, our worktree", tools.Agent{Worktree: filepath.Join(root, "a-wt")}, "m1", true, false},
		{"old record, worktree gone", tools.Agent{Worktree: filepath.Join(root, "gone")}, "m1", true, false},
		{"old record, another clone's worktree", tools.Agent{Worktree: filepath.Join(root, "b-wt")}, "m1", false, false},
		{"old record, a plain directory", tools.Agent{Worktree: filepath.Join(root, "plain")}, "m1", true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := RunsHere(tt.a, tt.machine, ownGitDir); got != tt.want {
				t.Errorf("RunsHere = %v, want %v", got, tt.want)
			}
			if got := RunsElsewhere(tt.a, tt.machine); got != tt.wantElse {
				t.Errorf("elsewhere = %v, want %v", got, tt.wantElse)
			}
			// kill, peek, send and attach refuse just the instances
			// elsewhere, with a stable code
			err := refuseElsewhere(tt.a, tt.machine, "kill")
			var te *tools.Error
			switch {
			case tt.wantElse && (!errors.As(err, &te) || te.Code != tools.InstanceElsewhere):
				t.Errorf("refuseElsewhere = %v, want %s", err, tools.InstanceElsewhere)
			case !tt.wantElse && err != nil:
				t.Errorf("refuseElsewhere = %v, want nil", err)
			}
		})
	}
}

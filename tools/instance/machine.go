package instance

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/gitcodex/git-codex/tools"
)

// Where an instance runs. Its tmux session and worktree exist on one
// machine only, and only that machine can tell whether it is alive: on
// another, a session it cannot find says nothing. So spawn records the
// repository's machine id (and the host name, for people), and reap,
// cleanup and the watcher judge only the instances that carry this
// repository's; the others are reported, never marked FAILED nor cleaned
// up. The machine id is per repository (<git dir>/codex/machine), so two
// clones on one machine are two machines here, as they are to tmux
// sessions named after instances.

// MachineHere is what an instance made by this call records of where it
// runs: this repository's machine id and the host name.
func MachineHere(c *tools.Call) (machine, host string, err error) {
	machine, err = c.Repo.MachineID()
	if err != nil {
		return "", "", err
	}
	host, _ = os.Hostname() // for people only: none is no harm
	return machine, host, nil
}

// RunsElsewhere reports whether instance a records another machine than this
// repository's (machine): reap and cleanup leave it to that machine.
func RunsElsewhere(a tools.Agent, machine string) bool {
	return a.Machine != "" && a.Machine != machine
}

// RunsHere reports whether instance a is this repository's to judge:
// machine is this repository's id. A record made before instances kept
// their machine is judged as it was then: its worktree must be this
// repository's, or gone (WorktreeHere).
func RunsHere(a tools.Agent, machine, gitDir string) bool {
	if a.Machine != "" {
		return a.Machine == machine
	}
	return WorktreeHere(a.Worktree, gitDir)
}

// Elsewhere is an instance reap or cleanup left alone because another
// machine runs it.
type Elsewhere struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Host    string `json:"host,omitempty"`
	Machine string `json:"machine"`
}

// refuseElsewhere refuses to act (verb: kill, peek, send, attach) on
// instance a when another machine than this repository's (machine) runs
// it: its session here, if one has its name, is another instance's, and
// none says nothing of it. Records without a machine act as before.
func refuseElsewhere(a tools.Agent, machine, verb string) error {
	if !RunsElsewhere(a, machine) {
		return nil
	}
	host := a.Host
	if host == "" {
		host = "the machine that spawned it"
	}
	return tools.Errorf(tools.InstanceElsewhere, "%s runs on another machine (%s, machine %s): run `git codex %s %s` on %s; nothing changed here", a.ID, host, a.Machine, verb, a.ID, host).
		With("agent_id", a.ID).With("host", a.Host).With("machine", a.Machine)
}

// refuseElsewhereCall is refuseElsewhere with this call's repository's
// machine id.
func refuseElsewhereCall(c *tools.Call, a tools.Agent, verb string) error {
	machine, err := c.Repo.MachineID()
	if err != nil {
		return err
	}
	return refuseElsewhere(a, machine, verb)
}

// WorktreeHere reports whether an instance's worktree is this
// repository's (gitDir is its common git directory), or gone: a worktree
// that exists and whose .git names another repository is another
// clone's, and so is its instance.
func WorktreeHere(worktree, gitDir string) bool {
	if worktree == "" {
		return true
	}
	b, err := os.ReadFile(filepath.Join(worktree, ".git"))
	if err != nil {
		return true // gone (or a plain directory): nothing says it is another's
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return true
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(worktree, dir)
	}
	got, err := filepath.EvalSymlinks(filepath.Dir(dir))
	if err != nil {
		return true // its repository is gone: nothing says it is another's
	}
	want, err := filepath.EvalSymlinks(filepath.Join(gitDir, "worktrees"))
	if err != nil {
		return false // this repository has no worktrees; that one's has
	}
	return want == got
}

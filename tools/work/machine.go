package work

import (
	"os"

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

// spawnedHere is what an instance made by this call records of where it
// runs: this repository's machine id and the host name.
func spawnedHere(c *tools.Call) (machine, host string, err error) {
	machine, err = c.Repo.MachineID()
	if err != nil {
		return "", "", err
	}
	host, _ = os.Hostname() // for people only: none is no harm
	return machine, host, nil
}

// elsewhere reports whether instance a records another machine than this
// repository's (machine): reap and cleanup leave it to that machine.
func elsewhere(a tools.Agent, machine string) bool {
	return a.Machine != "" && a.Machine != machine
}

// runsHere reports whether instance a is this repository's to judge:
// machine is this repository's id. A record made before instances kept
// their machine is judged as it was then: its worktree must be this
// repository's, or gone (WorktreeHere).
func runsHere(a tools.Agent, machine, gitDir string) bool {
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
	if !elsewhere(a, machine) {
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

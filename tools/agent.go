package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
)

const DirAgents = "agents"

func AgentPath(id string) string { return DirAgents + "/" + id + ".json" }

// agentKind: agents/<id>.json, one per registered agent.
func agentKind() Kind {
	k := RecordKind(Kind{Name: "agent", Dir: DirAgents, Depth: 1, Kept: true}, func(_ []string, name string, a *Agent) error {
		if a.ID != name || ValidateAgentID(a.ID) != nil {
			return fmt.Errorf("agent record names %q", a.ID)
		}
		if _, err := ParseAgentType(string(a.Type)); err != nil || a.Type == TypeHuman {
			return fmt.Errorf("agent type %q", a.Type)
		}
		return nil
	})
	k.Retention = RetainInstances
	k.Archived = func(data []byte) bool {
		var a Agent
		if json.Unmarshal(data, &a) != nil {
			return false
		}
		removed := a.CleanedAt != nil || (a.Worktree == "" && a.TmuxSession == "")
		switch a.Status {
		case StatusTerminated, StatusAbandoned, StatusFailed, StatusCompleted:
			return removed && len(a.HeldTasks) == 0
		}
		return false
	}
	return k
}

// Agent states.
const (
	StateIdle = "idle"
)

// Agent is a registered agent: the record agent_get_status returns.
// Mutable: Clock is the Lamport time of its last change.
type Agent struct {
	ID          string    `json:"id"`
	Type        AgentType `json:"type"`
	State       string    `json:"state"`
	Supervisor  string    `json:"supervisor,omitempty"`
	Worktree    string    `json:"worktree,omitempty"`
	Branch      string    `json:"branch,omitempty"`
	TmuxSession string    `json:"tmux_session,omitempty"`
	// Machine and Host say where an instance runs: its tmux session and
	// worktree exist only there, so only that machine's reap and cleanup
	// judge it. Records made before they were kept have neither.
	Machine string `json:"machine,omitempty" jsonschema:"the machine id (<git dir>/codex/machine) of the repository that spawned it: only there is its session judged"`
	Host    string `json:"host,omitempty" jsonschema:"the host name of the machine that spawned it"`
	// Status, Launcher, BaseCommit and Prompt are an instance's: an agent
	// git codex runs in its worktree and tmux session (see tools/instance).
	Status       string     `json:"status,omitempty" jsonschema:"an instance's lifecycle: STARTING, ACTIVE, WAITING_REVIEW, REVIEWING, TERMINATED, ABANDONED, FAILED, COMPLETED"`
	StatusReason string     `json:"status_reason,omitempty" jsonschema:"why the instance ended as it did"`
	Launcher     string     `json:"launcher,omitempty" jsonschema:"the agent CLI it runs"`
	BaseCommit   string     `json:"base_commit,omitempty" jsonschema:"the commit its branch started at"`
	Prompt       string     `json:"prompt,omitempty" jsonschema:"the task it was spawned with"`
	ReviewOf     string     `json:"review_of,omitempty" jsonschema:"for a reviewer: the coding instance it reviews"`
	EndedAt      *time.Time `json:"ended_at,omitempty"`
	Rescued      []string   `json:"rescued,omitempty" jsonschema:"refs under refs/codex/rescue/ where cleanup saved its work"`
	HeldTasks    []string   `json:"held_tasks,omitempty" jsonschema:"tasks it holds and has not finished (see noteHeld)"`
	CleanedAt    *time.Time `json:"cleaned_at,omitempty" jsonschema:"when cleanup removed its session, worktree and branch"`
	CreatedBy    string     `json:"created_by"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
	UpdatedBy    string     `json:"updated_by,omitempty"`
	LastActiveAt *time.Time `json:"last_active_at"`
	// PR is the pull request the agent opened last (create_pull_request).
	PR *PullRequest `json:"pr,omitempty"`
	// TokenHash is the hash of the agent's credential (hashSecret); the
	// credential itself is shown once, to whoever registered it.
	TokenHash string         `json:"token_hash,omitempty"`
	Clock     gitstate.Clock `json:"clock"`
}

// GetAgent reads an agent's record, or fails with AGENT_NOT_FOUND.
func GetAgent(tx *gitstate.Tx, id string) (Agent, error) {
	if err := ValidateAgentID(id); err != nil {
		return Agent{}, Errorf(AgentNotFound, "no agent %q; list agents with `git codex agent list`", id).With("agent_id", id)
	}
	var a Agent
	err := tx.Get(AgentPath(id), &a)
	if errors.Is(err, gitstate.ErrNotFound) {
		return Agent{}, Errorf(AgentNotFound, "no agent %q; list agents with `git codex agent list`", id).With("agent_id", id)
	}
	return a, err
}

// Instance statuses (seed 000). An instance is made STARTING (its intent
// recorded), becomes ACTIVE once its session runs, WAITING_REVIEW while a
// reviewer looks at its work (a reviewer is REVIEWING), and ends
// TERMINATED, ABANDONED, FAILED or COMPLETED.
const (
	StatusStarting      = "STARTING"
	StatusActive        = "ACTIVE"
	StatusWaitingReview = "WAITING_REVIEW"
	StatusReviewing     = "REVIEWING"
	StatusTerminated    = "TERMINATED"
	StatusAbandoned     = "ABANDONED"
	StatusFailed        = "FAILED"
	StatusCompleted     = "COMPLETED"
)

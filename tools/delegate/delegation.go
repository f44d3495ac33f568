package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tmux"
	"github.com/gitcodex/git-codex/tools"
)

// Dir holds delegated sessions (seed 002):
// delegations/<x>/<y>/<id>.json. ("sessions" are seed 001's cycle
// sessions.)
const Dir = "delegations"

// Delegated session statuses.
const (
	DelegationRunning     = "RUNNING"
	DelegationDone        = "DONE"
	DelegationInterrupted = "INTERRUPTED"
	DelegationAborted     = "ABORTED"
	DelegationFailed      = "FAILED"
)

// Permission modes (seed 002): auto approves safe tools and refuses the
// ones that need a person's yes; allow approves everything; deny refuses
// everything that needs permission.
var permissionModes = []string{"auto", "allow", "deny"}

// Reasons a turn stopped before the agent finished it: the seed's third
// error level, a partial result.
const (
	ReasonBudget      = "budget_tokens"
	ReasonMaxTurns    = "max_turns"
	ReasonInterrupted = "interrupted"
	ReasonDisconnect  = "disconnected"
	ReasonTimeout     = "timeout"
)

// Delegation is one delegated session: a prompt handed to an agent CLI in
// headless mode, and the turns that continued it. Mutable: each turn
// updates status, cost and turns; the turns themselves are appended.
type Delegation struct {
	ID    string `json:"id"`
	Agent string `json:"agent" jsonschema:"the launcher: claude, codex, gemini or one configured"`
	// AgentSessionID is the agent CLI's own session id (claude's
	// session_id, codex's thread_id, gemini's session_id), which the next
	// turn resumes.
	AgentSessionID string `json:"agent_session_id,omitempty"`
	Model          string `json:"model,omitempty"`
	PermissionMode string `json:"permission_mode"`
	WorkingDir     string `json:"working_dir"`
	MaxTurns       int    `json:"max_turns"`
	BudgetTokens   int    `json:"budget_tokens"`
	// TimeoutSeconds is each turn's wall-clock limit (0: the default).
	TimeoutSeconds int `json:"timeout_seconds,omitempty"`
	// AgentTokens is the agent CLI's own count of its session's tokens
	// as it last reported it, where that count covers the whole session
	// (codex reports a resumed thread's usage cumulatively): the next
	// turn's tokens are its count less this one.
	AgentTokens int `json:"agent_tokens,omitempty"`
	// MCPServers names the MCP servers attached to the first turn (their
	// environments never enter the state).
	MCPServers   []string `json:"mcp_servers,omitempty"`
	Status       string   `json:"status"`
	StatusReason string   `json:"status_reason,omitempty"`
	// Stop is what someone asked of the running turn: "interrupt" or
	// "abort"; the turn's runner reads it when its process ends.
	Stop       string           `json:"stop,omitempty"`
	Owner      string           `json:"owner" jsonschema:"the caller that started the session; only it, its supervisor, supervisors and people control it"`
	Host       string           `json:"host" jsonschema:"the machine whose process runs its turns"`
	CostUSD    float64          `json:"cost_usd"`
	NumTurns   int              `json:"num_turns"`
	TokensUsed int              `json:"tokens_used"`
	Turns      []DelegationTurn `json:"turns"`
	CreatedAt  time.Time        `json:"created_at"`
	UpdatedAt  time.Time        `json:"updated_at"`
	Clock      gitstate.Clock   `json:"clock"`
}

// DelegationTurn is one call that ran the agent CLI (query, continue or
// resume): who asked what, and what came back.
type DelegationTurn struct {
	Prompt         string  `json:"prompt"`
	Model          string  `json:"model,omitempty"`
	PermissionMode string  `json:"permission_mode"`
	Status         string  `json:"status"`
	Result         string  `json:"result,omitempty"`
	Reason         string  `json:"reason,omitempty"`
	Error          string  `json:"error,omitempty"`
	CostUSD        float64 `json:"cost_usd"`
	NumTurns       int     `json:"num_turns"`
	Tokens         int     `json:"tokens"`
	// OutputCut says what of the agent CLI's output the turn did not
	// keep (delegate.max_line_bytes, delegate.max_transcript_bytes).
	OutputCut *OutputCut `json:"output_cut,omitempty"`
	By        string     `json:"by"`
	StartedAt time.Time  `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
}

// delegationIDPattern is the shape of delegated sessions' ids: NewID's with
// prefix "dlg".
var delegationIDPattern = tools.LazyRegexp(`^dlg-[0-9a-z]{16}$`)

func delegationPath(id string) string {
	return Dir + "/" + gitstate.Fanout(id) + "/" + id + ".json"
}

// workMark is the name of the work mark a turn's runner holds while its
// agent process runs: another process tells a live turn from one whose
// runner died by it.
func (d Delegation) workMark() string { return "delegation-" + d.ID }

// getDelegation reads a delegated session, or RESOURCE_NOT_FOUND.
func getDelegation(tx *gitstate.Tx, id string) (Delegation, error) {
	var d Delegation
	if !delegationIDPattern.MatchString(id) {
		return d, tools.Errorf(tools.ResourceNotFound, "no delegated session %q; list them with `git codex delegate list`", id).With("session_id", id)
	}
	err := tx.Get(delegationPath(id), &d)
	if errors.Is(err, gitstate.ErrNotFound) {
		return d, tools.Errorf(tools.ResourceNotFound, "no delegated session %q; list them with `git codex delegate list`", id).With("session_id", id)
	}
	return d, err
}

// putDelegation stamps and writes a delegated session.
func putDelegation(c *tools.Call, d *Delegation) error {
	d.UpdatedAt, d.Clock = c.Tx.Now(), c.Tx.Clock()
	return c.Tx.Put(delegationPath(d.ID), *d)
}

// mayControl reports whether the caller may control (continue, stop,
// reconfigure) d: its owner, the owner's supervisor, supervisors and
// people.
func mayControl(c *tools.Call, d Delegation) bool {
	if c.Caller.ID == d.Owner || c.Caller.Type == tools.TypeSupervisor || c.Caller.Type == tools.TypeHuman {
		return true
	}
	if owner, err := tools.GetAgent(c.Tx, d.Owner); err == nil && owner.Supervisor == c.Caller.ID {
		return true
	}
	return false
}

// controlled reads a session the caller may control, or says why not.
func controlled(c *tools.Call, id string) (Delegation, error) {
	d, err := getDelegation(c.Tx, id)
	if err != nil {
		return d, err
	}
	if !mayControl(c, d) {
		return d, tools.Errorf(tools.PermissionDenied, "delegated session %s belongs to %s; only its owner, the owner's supervisor, supervisors and people may control it", id, d.Owner).
			With("session_id", id).With("owner", d.Owner)
	}
	return d, nil
}

// delegationKind: delegations/<x>/<y>/<id>.json, its id its name and
// fan-out, its owner a caller id, its status one of the five.
func delegationKind() tools.Kind {
	k := tools.Kind{Name: "delegation", Dir: Dir, Depth: 3, Fanout: 2}
	k = tools.RecordKind(k, func(rel []string, name string, d *Delegation) error {
		if d.ID != name || !delegationIDPattern.MatchString(d.ID) || !tools.FannedOut(rel, d.ID) {
			return fmt.Errorf("delegation record %q does not belong at this path", d.ID)
		}
		if err := tools.ValidateCallerID(d.Owner); err != nil {
			return fmt.Errorf("delegation %q owner: %w", d.ID, err)
		}
		if !slices.Contains([]string{DelegationRunning, DelegationDone, DelegationInterrupted, DelegationAborted, DelegationFailed}, d.Status) {
			return fmt.Errorf("delegation %q has status %q", d.ID, d.Status)
		}
		return nil
	})
	k.Retention = Retention
	k.Archived = func(data []byte) bool {
		var d Delegation
		return json.Unmarshal(data, &d) == nil && d.Status != "" && d.Status != DelegationRunning
	}
	return k
}

// reapDelegations is a Reapers hook (tools.Hooks): it marks FAILED the
// delegated sessions recorded RUNNING whose runner no longer holds their
// work mark (it died, and with it, by its parent-death signal, the agent
// process), and returns their ids.
func reapDelegations(c *tools.Call, dryRun bool) ([]string, error) {
	var dead []Delegation
	err := tools.WalkJSON(c.Tx, Dir, func(d Delegation) {
		if d.Status == DelegationRunning && !c.Repo.WorkHeld(d.workMark()) {
			dead = append(dead, d)
		}
	})
	ids := []string{}
	for _, d := range dead {
		ids = append(ids, d.ID)
		if dryRun {
			continue
		}
		d.Status, d.StatusReason, d.Stop = DelegationFailed, "its process died (found by reap)", ""
		if n := len(d.Turns); n > 0 && d.Turns[n-1].Status == DelegationRunning {
			end := c.Tx.Now()
			d.Turns[n-1].Status, d.Turns[n-1].Reason, d.Turns[n-1].EndedAt = DelegationFailed, d.StatusReason, &end
		}
		if err := putDelegation(c, &d); err != nil {
			return nil, err
		}
		// the runner died (SIGKILL): the agent CLI went with it (its
		// parent-death signal), but what it started (tool commands,
		// servers) may still run, in its group or a session of its own;
		// each carries the turn's CODEX_DELEGATION in its environment
		id := d.ID
		c.After(func(ctx context.Context, f *tools.Followup) error {
			tmux.EndProcessesWithEnv("CODEX_DELEGATION="+id, delegationKillGrace)
			return nil
		})
	}
	return ids, err
}

// delegationKillGrace is how long reap waits, after SIGTERM, for what a
// dead runner's turn started to exit before it sends SIGKILL.
const delegationKillGrace = 2 * time.Second

// Retention is the retention class of delegation records: the archive
// tool's retention.delegations, whose sessions it archives once ended.
const Retention = "delegations"

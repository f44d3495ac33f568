package delegate

import (
	"context"
	"slices"
	"time"

	"github.com/gitcodex/git-codex/tools"
)

// DelegateListIn is agent_list_sessions' input.
type DelegateListIn struct {
	Status string `json:"status,omitempty" jsonschema:"only sessions with this status: RUNNING, DONE, INTERRUPTED, ABORTED or FAILED"`
}

// DelegationSummary is one session in a listing.
type DelegationSummary struct {
	SessionID      string    `json:"session_id"`
	Status         string    `json:"status"`
	StatusReason   string    `json:"status_reason,omitempty"`
	Agent          string    `json:"agent"`
	AgentSessionID string    `json:"agent_session_id,omitempty"`
	Model          string    `json:"model,omitempty"`
	PermissionMode string    `json:"permission_mode"`
	Owner          string    `json:"owner"`
	WorkingDir     string    `json:"working_dir"`
	CostUSD        float64   `json:"cost_usd"`
	NumTurns       int       `json:"num_turns"`
	TokensUsed     int       `json:"tokens_used"`
	Prompts        int       `json:"prompts" jsonschema:"the calls that ran a turn (query, continue, resume)"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// DelegationList is agent_list_sessions' output.
type DelegationList struct {
	Sessions []DelegationSummary `json:"sessions"`
}

// AgentListSessions lists the delegated sessions the caller may see.
var AgentListSessions = tools.Define("agent_list_sessions", "delegate.list",
	"List the delegated sessions the caller may see (its own; an agent's supervisor sees its agents'; supervisors and people see all), oldest first, with status, cost and turns.",
	tools.CLI{Path: "delegate list"},
	func(ctx context.Context, c *tools.Call, in DelegateListIn) (DelegationList, error) {
		if in.Status != "" && !slices.Contains([]string{DelegationRunning, DelegationDone, DelegationInterrupted, DelegationAborted, DelegationFailed}, in.Status) {
			return DelegationList{}, tools.Errorf(tools.InvalidInput, "status %q: use RUNNING, DONE, INTERRUPTED, ABORTED or FAILED", in.Status).With("field", "status")
		}
		out := DelegationList{Sessions: []DelegationSummary{}}
		err := tools.WalkJSON(c.Tx, Dir, func(d Delegation) {
			if (in.Status != "" && d.Status != in.Status) || !mayControl(c, d) {
				return
			}
			out.Sessions = append(out.Sessions, DelegationSummary{
				SessionID: d.ID, Status: d.Status, StatusReason: d.StatusReason, Agent: d.Agent, AgentSessionID: d.AgentSessionID, Model: d.Model,
				PermissionMode: d.PermissionMode, Owner: d.Owner, WorkingDir: d.WorkingDir, CostUSD: d.CostUSD, NumTurns: d.NumTurns,
				TokensUsed: d.TokensUsed, Prompts: len(d.Turns), CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
			})
		})
		slices.SortFunc(out.Sessions, func(a, b DelegationSummary) int {
			if a.SessionID < b.SessionID {
				return -1
			}
			return 1
		})
		c.Summarize("%s listed %d delegated session(s)", c.Caller.ID, len(out.Sessions))
		return out, err
	}).Hint(tools.Hints{ReadOnly: true, Idempotent: true})

package tools

import (
	"errors"
	"fmt"
)

// Code is a stable, machine-readable error code. Callers branch on codes,
// never on messages; the codes are the seeds' (shared/seeds) plus the few
// that a git-backed store adds.
type Code string

// Error codes. New codes are added here, never renamed.
const (
	PermissionDenied     Code = "PERMISSION_DENIED"      // the caller's type may not use the tool, or the record is someone else's
	ToolNotFound         Code = "TOOL_NOT_FOUND"         // no tool has that name
	InvalidInput         Code = "INVALID_INPUT"          // arguments failed decoding, the schema or the tool's own checks
	AgentNotFound        Code = "AGENT_NOT_FOUND"        // the caller or a named agent is not registered
	ResourceNotFound     Code = "RESOURCE_NOT_FOUND"     // a referenced record (mail, decision...) does not exist
	InvalidAgentState    Code = "INVALID_AGENT_STATE"    // the agent is in the wrong state for the operation
	AlreadyExists        Code = "ALREADY_EXISTS"         // a record with that id exists
	NotInitialized       Code = "NOT_INITIALIZED"        // the repository has no git codex state: run `git codex init`
	NotRepository        Code = "NOT_A_REPOSITORY"       // the directory is not inside a git repository
	RepositoryRefused    Code = "REPOSITORY_REFUSED"     // git refuses the repository (safe.directory, an unknown format or extension)
	RemoteError          Code = "REMOTE_ERROR"           // a sync remote could not be reached, or refused
	PushRejected         Code = "PUSH_REJECTED"          // the remote's state kept moving; sync again
	InvalidRemoteState   Code = "INVALID_REMOTE_STATE"   // a remote's state holds records this version cannot read; nothing merged
	InternalError        Code = "INTERNAL_ERROR"         // anything unexpected; the message says what failed
	LockDenied           Code = "LOCK_DENIED"            // the lock is held by someone else
	AlreadyClaimed       Code = "ALREADY_CLAIMED"        // the task is claimed by someone else
	InstanceNotRunning   Code = "INSTANCE_NOT_RUNNING"   // the instance's tmux session is gone or its agent exited
	InstanceElsewhere    Code = "INSTANCE_ELSEWHERE"     // the instance runs on another machine; act on it there
	NudgeNotDelivered    Code = "NUDGE_NOT_DELIVERED"    // the agent was not seen to take a line typed into its pane
	AgentStartFailed     Code = "AGENT_START_FAILED"     // the agent's worktree or session could not be made, or the agent exited at once
	ReviewLimitExceeded  Code = "REVIEW_LIMIT_EXCEEDED"  // the coder has had review.max_iterations reviews
	FeedbackNotDelivered Code = "FEEDBACK_NOT_DELIVERED" // the feedback commit could not be made in the coder's worktree
	CommandNotFound      Code = "COMMAND_NOT_FOUND"      // no prompt command has that C3L name (seed 004)
	RegistryLoadFailed   Code = "REGISTRY_LOAD_FAILED"   // registry.json or a template could not be read (seed 004)
	ExecutionFailed      Code = "EXECUTION_FAILED"       // a prompt command's template could not be rendered (seed 004)
	SecretDetected       Code = "SECRET_DETECTED"        // an argument holds what looks like a credential; nothing stored
	UnsupportedRepo      Code = "UNSUPPORTED_REPOSITORY" // the repository's format (SHA-256, reftable) cannot be written safely
	StateUnreadable      Code = "STATE_UNREADABLE"       // an object of the state is missing; nothing written; restore an earlier state
	HistoryCutOff        Code = "HISTORY_CUT_OFF"        // what was asked lies before where a shallow first sync's history stops
	PreviousState        Code = "PREVIOUS_STATE_FOUND"   // init found the state of a deleted refs/codex/state; restore it or start afresh
	ReadOnly             Code = "READ_ONLY"              // the repository cannot be written; the call needed to write
	AuthFailed           Code = "AUTH_FAILED"            // a credential (agent token, role PSK) is missing or wrong
	ConfigInvalid        Code = "CONFIG_INVALID"         // a setting the tool needs is missing or malformed (a role's PSK, the workflow)
	InvalidRole          Code = "INVALID_ROLE"           // the role is not one of the workflow's
	InvalidSession       Code = "INVALID_SESSION"        // the session token is unknown
	InvalidTarget        Code = "INVALID_TARGET"         // a handoff's target is not a role of the workflow
	NoActiveCycle        Code = "NO_ACTIVE_CYCLE"        // no cycle is running (for that feature)
	CycleAlreadyActive   Code = "CYCLE_ALREADY_ACTIVE"   // the feature's cycle is running already
	InvalidPhase         Code = "INVALID_PHASE"          // the cycle's phase does not allow the operation
	ArchiveNotAllowed    Code = "ARCHIVE_NOT_ALLOWED"    // only a completed cycle is archived
	SchemaInvalid        Code = "SCHEMA_INVALID"         // a handoff payload does not follow the handoff schema
	InvalidTool          Code = "INVALID_TOOL"           // a seed-001 tool name (session.open): ours are spelled with _
	GitHubUnavailable    Code = "GITHUB_UNAVAILABLE"     // GitHub could not be reached, or no token or repository was found; the call is kept to retry
	GitHubRefused        Code = "GITHUB_REFUSED"         // GitHub answered with a refusal (401, 403, 404, 422); the message is GitHub's
	TransientError       Code = "TRANSIENT_ERROR"        // a transient failure outlasted every retry
	AgentFailed          Code = "AGENT_FAILED"           // a delegated agent CLI exited non-zero or printed what its contract does not allow
	SessionNotRunning    Code = "SESSION_NOT_RUNNING"    // the delegated session has no turn running to stop
	SessionBusy          Code = "SESSION_BUSY"           // the delegated session is running a turn; wait for it, or interrupt it
	SessionAborted       Code = "SESSION_ABORTED"        // the delegated turn was killed by agent_abort
	Timeout              Code = "TIMEOUT"                // the call outlasted its time limit (tools.timeout_seconds); nothing but its audit record was written
)

// CodeInfo pairs a code with what it means, for the reference docs.
type CodeInfo struct {
	Code    Code
	Meaning string
}

// Codes lists every error code with its meaning.
func Codes() []CodeInfo {
	return []CodeInfo{
		{PermissionDenied, "the caller's type may not use the tool (see the policy in `git codex config get`), the record belongs to someone else, or an agent tried to change a setting of this machine (launchers, github.api_url, paths: a person sets those with `git config`)"},
		{ToolNotFound, "no tool has that name"},
		{InvalidInput, "the arguments failed JSON decoding, the tool's schema, or the tool's own checks (sizes, exactly-one-of)"},
		{AgentNotFound, "the caller (--as / CODEX_INSTANCE) or a named agent is not registered"},
		{ResourceNotFound, "a referenced record (mail, decision, ...) does not exist"},
		{InvalidAgentState, "the agent is in the wrong state for the operation"},
		{AlreadyExists, "a record with that id exists"},
		{NotInitialized, "the repository has no git codex state: run `git codex init`"},
		{NotRepository, "the directory is not inside a git repository"},
		{RepositoryRefused, "git refuses the repository (it belongs to someone else and is not a safe.directory, or its format or an extension is one git does not know): the message gives git's reason; nothing was read or written"},
		{RemoteError, "a sync remote could not be reached or refused the transfer; nothing local changed"},
		{PushRejected, "the remote's state kept moving during `git codex sync`; run it again"},
		{InvalidRemoteState, "the remote's state holds records that do not decode or do not belong at their paths; nothing was merged"},
		{InternalError, "anything unexpected; the message says what failed"},
		{LockDenied, "the lock is held by someone else (details name the holder and since when); wait, or ask a person or supervisor to release it with force"},
		{AlreadyClaimed, "the task is claimed by someone else, or not open (details name the holder); pick another with `git codex task list --state PENDING`"},
		{InstanceNotRunning, "the instance's tmux session is gone or its agent exited; see `git codex ps`, and `git codex reap` to record it"},
		{InstanceElsewhere, "the instance runs on another machine (details.host): run the command there; nothing changed here"},
		{AgentStartFailed, "the instance's worktree or tmux session could not be made, or its agent exited at once; it is recorded FAILED (see `git codex agent show <id>`) and what was made for it is removed"},
		{ReviewLimitExceeded, "the coding agent has had review.max_iterations reviews (details: current_iteration, max_iterations, suggestions): open a pull request, abandon, or fix it by hand"},
		{FeedbackNotDelivered, "the feedback could not be committed in the coder's worktree (gone, or its branch moved); it is kept in the state and may be sent again"},
		{NudgeNotDelivered, "the agent was not seen to take the line: nothing was typed (a dialog, a turn that did not end, not its input line), or after typing details.seen says what the pane showed (text_not_shown, enter_not_taken, line_dropped, queued_unread); look with `git codex peek <id>`"},
		{CommandNotFound, "no prompt command has that C3L name (c1 c2 c3) in the agent's registry (details name them); find one with `git codex prompt search <words>`"},
		{RegistryLoadFailed, "the prompt registry (.agent/<agent>/registry.json) or a template could not be read: details name the file, the line when known, and the cause; the built-in prompts are still served"},
		{ExecutionFailed, "a prompt command's template could not be rendered (no file for the edition asked for, an unreadable file, a broken front matter); details name the file and the cause"},
		{UnsupportedRepo, "the repository uses a format git codex cannot write without corrupting it (SHA-256 object names, reftable refs); nothing was written"},
		{StateUnreadable, "an object of the state is missing (e.g. pruned by `git gc --prune=now` beside a writer); nothing was written; the message names the last readable state to restore with `git codex init --restore <commit>`"},
		{HistoryCutOff, "what was asked for (the state at a time, the base of a merge) lies before where this repository's history of the state stops: a shallow first sync fetched its last codex.firstSyncDays days; `git codex sync --deepen <days>` fetches more of it, `git codex sync --full` all of it"},
		{PreviousState, "`git codex init` found the state of a deleted refs/codex/state in the object store; restore it with `git codex init --restore <commit>`, or start afresh with `git codex init --fresh`"},
		{ReadOnly, "the repository cannot be written (read-only .git, or a full disk) and the call needed to write; reads still answer, unrecorded"},
		{SecretDetected, "an argument holds what looks like a credential (details name the field and the kind, never the value); nothing of it was stored. See docs/SECURITY.md"},
		{AuthFailed, "a credential is missing or wrong: an agent's token under auth.agents=required (CODEX_TOKEN / --token), a person acting from an agent's environment, or a role's PSK at session_open"},
		{ConfigInvalid, "a setting the tool needs is missing or malformed: a role's PSK (git config codex.role.<role>.psk or CODEX_PSK_<ROLE>), or cycle.workflow"},
		{InvalidRole, "the role is not one of the workflow's roles (see `git codex config get cycle.workflow`)"},
		{InvalidSession, "the session token is unknown; open a new one with `git codex session open`"},
		{InvalidTarget, "a handoff's target is not a role of the workflow"},
		{NoActiveCycle, "no cycle is running (for that feature); start one with `git codex cycle start`"},
		{CycleAlreadyActive, "the feature's cycle is running already; see `git codex cycle status`"},
		{InvalidPhase, "the cycle's phase does not allow the operation (a handoff to the wrong target, completing outside its phase)"},
		{ArchiveNotAllowed, "the cycle is not complete, or the caller is not the role that completes it"},
		{SchemaInvalid, "a handoff payload does not follow the handoff schema (details name the field)"},
		{InvalidTool, "a seed-001 tool name such as session.open: git codex spells them session_open"},
		{GitHubUnavailable, "GitHub could not be reached, or no token (GH_TOKEN) or repository (origin, GH_REPO) was found; the call is kept and `git codex github retry` replays it"},
		{GitHubRefused, "GitHub refused the call (401, 403, 404, 422); the message is GitHub's"},
		{TransientError, "a transient failure (timeout, connection, GitHub 5xx or rate limit) outlasted every retry"},
		{AgentFailed, "a delegated agent CLI exited non-zero without a result, or printed something that is not its JSON output; details carry its exit status and the end of its stderr; the session is recorded FAILED"},
		{SessionNotRunning, "the delegated session has no turn running (it is DONE, INTERRUPTED, ABORTED or FAILED); see `git codex delegate list`"},
		{SessionBusy, "the delegated session is running a turn; wait for its result, or stop it with `git codex delegate interrupt <session>`"},
		{SessionAborted, "the delegated turn was killed by agent_abort (its whole process group); the session is recorded ABORTED"},
		{Timeout, "the call outlasted its time limit (tools.timeout_seconds, or tools.<tool>.timeout_seconds), counted from its start: nothing it would have written was kept (its audit record says TIMEOUT); work it had started outside git was stopped and recorded as when its client goes. Details: timeout_seconds, key, elapsed_ms, and cause_code when the work it stopped failed"},
	}
}

// Error is a tool failure as callers see it: {code, message, details},
// and (seed 000) the tool that failed and the caller's instance, which the
// registry fills in on the way out (Registry.CallAs). Messages say what
// failed and what to do next.
type Error struct {
	Code    Code           `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
	// ToolName is the tool the call named (seed 000's tool_name).
	ToolName string `json:"tool_name,omitempty" jsonschema:"the tool that failed"`
	// InstanceID is the calling agent's id when the caller is a
	// registered agent (seed 000's instance_id); empty for people.
	InstanceID string `json:"instance_id,omitempty" jsonschema:"the calling agent's instance id; absent for a person"`
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf returns an *Error with code and a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Details: map[string]any{}}
}

// With adds a detail and returns e, for chaining.
func (e *Error) With(key string, value any) *Error {
	e.Details[key] = value
	return e
}

// AsError turns any error into an *Error: tool errors keep their code,
// everything else is an INTERNAL_ERROR carrying the error's text.
func AsError(err error) *Error {
	var te *Error
	if errors.As(err, &te) {
		if te.Details == nil {
			te.Details = map[string]any{}
		}
		return te
	}
	return Errorf(InternalError, "%v", err)
}

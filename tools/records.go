package tools

import (
	"regexp"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
)

// Paths of records in the state tree. Collections that grow without bound
// fan out by gitstate.Fanout so no tree object gets large; docs/STATE.md
// describes the layout.
const (
	dirAgents    = "agents"
	dirMail      = "mail"
	dirDecisions = "decisions"
	dirLocks     = "locks"
	dirTasks     = "tasks"
	dirConflicts = "conflicts"
	// dirActiveReviews holds one record per coder under review: its
	// active review's claim (for the review loop, which is not built yet).
	dirActiveReviews = "reviews/active"
	pathConfig       = "config/config.json"
)

func agentPath(id string) string { return dirAgents + "/" + id + ".json" }

func mailDir(recipient string) string { return dirMail + "/" + recipient }

func mailPath(recipient, id string) string {
	return mailDir(recipient) + "/" + gitstate.Fanout(id) + "/" + id + ".json"
}

func decisionPath(id string) string {
	return dirDecisions + "/" + gitstate.Fanout(id) + "/" + id + ".json"
}

// taskIDPattern is the shape of ids NewID("t") makes; conflictIDPattern
// of those gitstate.DeriveID("c", ...) makes.
var (
	taskIDPattern     = regexp.MustCompile(`^t-[0-9a-z]{16}$`)
	conflictIDPattern = regexp.MustCompile(`^c-[0-9a-z]{16}$`)
)

func taskPath(id string) string {
	return dirTasks + "/" + gitstate.Fanout(id) + "/" + id + ".json"
}

func conflictPath(id string) string {
	return dirConflicts + "/" + gitstate.Fanout(id) + "/" + id + ".json"
}

func activeReviewPath(coder string) string { return dirActiveReviews + "/" + coder + ".json" }

// Agent states.
const (
	StateIdle = "idle"
)

// Agent is a registered agent: the record agent_get_status returns.
// Mutable: Clock is the Lamport time of its last change.
type Agent struct {
	ID           string         `json:"id"`
	Type         AgentType      `json:"type"`
	State        string         `json:"state"`
	Supervisor   string         `json:"supervisor,omitempty"`
	Worktree     string         `json:"worktree,omitempty"`
	Branch       string         `json:"branch,omitempty"`
	TmuxSession  string         `json:"tmux_session,omitempty"`
	CreatedBy    string         `json:"created_by"`
	CreatedAt    time.Time      `json:"created_at"`
	UpdatedAt    time.Time      `json:"updated_at"`
	UpdatedBy    string         `json:"updated_by,omitempty"`
	LastActiveAt *time.Time     `json:"last_active_at"`
	Clock        gitstate.Clock `json:"clock"`
}

// Mail is one message. Everything but the read flag is immutable; ReadAt
// and Clock change when the recipient reads it.
type Mail struct {
	ID        string         `json:"id"`
	From      string         `json:"from"`
	FromType  AgentType      `json:"from_type"`
	To        string         `json:"to"`
	Subject   string         `json:"subject"`
	Body      string         `json:"body"`
	InReplyTo string         `json:"in_reply_to,omitempty"`
	IsRead    bool           `json:"is_read"`
	CreatedAt time.Time      `json:"created_at"`
	ReadAt    *time.Time     `json:"read_at"`
	ReadBy    string         `json:"read_by,omitempty"`
	Clock     gitstate.Clock `json:"clock"`
}

// Decision is a decision an agent or person logged on purpose (every call
// is logged anyway, as a commit). Immutable.
type Decision struct {
	ID        string         `json:"id"`
	Title     string         `json:"title"`
	Body      string         `json:"body"`
	Actor     string         `json:"actor"`
	ActorType AgentType      `json:"actor_type"`
	CreatedAt time.Time      `json:"created_at"`
	Clock     gitstate.Clock `json:"clock"`
}

// Task states. A task is created PENDING, becomes IN_PROGRESS when claimed,
// goes to REVIEW when its holder submits it, and ends COMPLETED or
// CANCELLED; releasing it makes it PENDING again.
const (
	TaskPending    = "PENDING"
	TaskInProgress = "IN_PROGRESS"
	TaskReview     = "REVIEW"
	TaskCompleted  = "COMPLETED"
	TaskCancelled  = "CANCELLED"
)

// Task is a unit of work (seed 003) that one agent at a time holds: its
// claim. Mutable: Clock is the Lamport time of its last change.
type Task struct {
	ID          string         `json:"id"`
	Title       string         `json:"title"`
	Description string         `json:"description"`
	State       string         `json:"state"`
	Claim       *Claim         `json:"claim" jsonschema:"who holds the task; null while it is open"`
	CreatedBy   string         `json:"created_by"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
	UpdatedBy   string         `json:"updated_by"`
	Clock       gitstate.Clock `json:"clock"`
}

// ActiveReview holds the claim on a coder's one active review. The review
// loop (request_review, a later part; no tool writes it yet) is to claim
// it for the reviewer it spawns and free it when feedback is sent; sync
// already keeps it to one holder. Mutable.
type ActiveReview struct {
	Coder     string         `json:"coder"`
	Review    string         `json:"review,omitempty"`
	Claim     *Claim         `json:"claim" jsonschema:"the reviewer holding the coder's review; null when none is active"`
	UpdatedAt time.Time      `json:"updated_at"`
	UpdatedBy string         `json:"updated_by"`
	Clock     gitstate.Clock `json:"clock"`
}

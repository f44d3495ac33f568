package tools

import (
	"fmt"
	"regexp"
	"strings"
)

// AgentType is the kind of an agent; the permission policy is per type.
type AgentType string

// The agent types. Seed 003's supervisor/orchestrator/worker and seed 000's
// planning/coding/review, plus the human at the CLI.
const (
	TypeSupervisor   AgentType = "supervisor"
	TypeOrchestrator AgentType = "orchestrator"
	TypeWorker       AgentType = "worker"
	TypePlanning     AgentType = "planning"
	TypeCoding       AgentType = "coding"
	TypeReview       AgentType = "review"
	TypeHuman        AgentType = "human"
)

// AgentTypes lists every type, in the order help texts show them.
func AgentTypes() []AgentType {
	return []AgentType{TypeSupervisor, TypeOrchestrator, TypeWorker, TypePlanning, TypeCoding, TypeReview, TypeHuman}
}

// ParseAgentType accepts a type name in any case.
func ParseAgentType(s string) (AgentType, error) {
	for _, t := range AgentTypes() {
		if strings.EqualFold(s, string(t)) {
			return t, nil
		}
	}
	return "", Errorf(InvalidInput, "unknown agent type %q; use one of %s", s, typeNames()).With("type", s)
}

func typeNames() string {
	var names []string
	for _, t := range AgentTypes() {
		names = append(names, string(t))
	}
	return strings.Join(names, ", ")
}

// HumanPrefix starts the id of a person: "human:<git user.email>".
const HumanPrefix = "human:"

// HumanInbox is the recipient of mail sent with to_human: every person
// reads it.
const HumanInbox = "human"

// HumanID is the caller id of the person whose git user.email is email.
func HumanID(email string) string { return HumanPrefix + email }

// IsHuman reports whether id names a person rather than an agent.
func IsHuman(id string) bool { return strings.HasPrefix(id, HumanPrefix) }

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$`)

// emailPattern is what a person's id may hold after "human:": an address
// that is safe in a commit's author line (no <, >, spaces or control
// characters, which would make git fsck reject the commit).
var emailPattern = regexp.MustCompile(`^[^<>\s\x00-\x1f\x7f/]{1,254}$`)

// ValidateAgentID checks an agent id: 1–128 characters of letters, digits
// and ._@+-, starting with a letter or digit. Ids are tree entry names, so
// they may hold no "/"; "human" and "human:*" are reserved for people.
func ValidateAgentID(id string) error {
	if !idPattern.MatchString(id) {
		return Errorf(InvalidInput, "invalid agent id %q: use 1-128 letters, digits and ._@+- starting with a letter or digit", id).With("id", id)
	}
	if id == HumanInbox {
		return Errorf(InvalidInput, "agent id %q is reserved for the human inbox", id).With("id", id)
	}
	return nil
}

// Caller is who makes a call. ID is fixed by the adapter (--as,
// CODEX_INSTANCE, or the person's e-mail); Type is looked up in the state
// inside the call's transaction.
type Caller struct {
	ID   string    `json:"id"`
	Type AgentType `json:"type"`
}

// ValidateCallerID checks an id given with --as or CODEX_INSTANCE.
func ValidateCallerID(id string) error {
	if IsHuman(id) {
		if !emailPattern.MatchString(strings.TrimPrefix(id, HumanPrefix)) {
			return Errorf(InvalidInput, "invalid human id %q: use human:<email>", id)
		}
		return nil
	}
	if err := ValidateAgentID(id); err != nil {
		return fmt.Errorf("caller: %w", err)
	}
	return nil
}

package tools

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
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
	// TypeSystem is the sender type of mail git codex itself writes (a
	// conflict's loser is told by SystemSender); no caller has it.
	TypeSystem AgentType = "system"
)

// SystemSender is the From of mail git codex itself writes. The id is
// reserved: no agent can be registered under it and receive the replies.
const SystemSender = "git-codex"

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

// InboxFor is where mail to a caller goes: an agent's own inbox, or for
// a person the humans' shared one.
func InboxFor(id string) string {
	if IsHuman(id) {
		return HumanInbox
	}
	return id
}

// HumanID is the caller id of the person whose git user.email is email.
func HumanID(email string) string { return HumanPrefix + email }

// IsHuman reports whether id names a person rather than an agent.
func IsHuman(id string) bool { return strings.HasPrefix(id, HumanPrefix) }

// ValidAgentID reports 1–128 letters, digits and ._@+-, starting with a
// letter or digit. (A loop, not a regexp: `{0,127}` compiles into 127 copies
// and cost every CLI start a few milliseconds.)
func ValidAgentID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || !strings.ContainsRune("._@+-", rune(c))) {
			return false
		}
	}
	return true
}

// validEmail reports what a person's id may hold after "human:": an address
// that is safe in a commit's author line (no <, >, /, white space or control
// characters, which would make git fsck reject the commit), 1–254 bytes.
func validEmail(s string) bool {
	if len(s) == 0 || len(s) > 254 || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r == '<' || r == '>' || r == '/' || r < 0x20 || r == 0x7f || unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// ValidateAgentID checks an agent id: 1–128 characters of letters, digits
// and ._@+-, starting with a letter or digit. Ids are tree entry names, so
// they may hold no "/"; "human" and "human:*" are reserved for people.
func ValidateAgentID(id string) error {
	if !ValidAgentID(id) {
		return Errorf(InvalidInput, "invalid agent id %q: use 1-128 letters, digits and ._@+- starting with a letter or digit", id).With("id", id)
	}
	if id == HumanInbox {
		return Errorf(InvalidInput, "agent id %q is reserved for the human inbox", id).With("id", id)
	}
	if id == SystemSender {
		return Errorf(InvalidInput, "agent id %q is reserved for mail from git codex itself", id).With("id", id)
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
		if !validEmail(strings.TrimPrefix(id, HumanPrefix)) {
			return Errorf(InvalidInput, "invalid human id %q: use human:<email>", id)
		}
		return nil
	}
	if err := ValidateAgentID(id); err != nil {
		return fmt.Errorf("caller: %w", err)
	}
	return nil
}

// MayForce says who may take a resource from its holder (a lock, a task,
// an agent's credential): people and supervisors, the ones who also
// register agents of any type. Every noun with a holder asks it.
func MayForce(t AgentType) bool { return t == TypeHuman || t == TypeSupervisor }

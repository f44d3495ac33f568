package gitstate

import "time"

// Kinds of audit event, as AuditEntry.Kind names them: every call is a
// commit, but a read's tree is its parent's and a refusal carries
// Codex-Error.
const (
	KindChange  = "change"
	KindRead    = "read"
	KindRefusal = "refusal"
)

// AuditEntry is one audit event decoded from its commit's trailers: the
// one projection `git codex log --json`, `git codex show` and the web
// page's /api/events all answer with, so a field means the same thing
// wherever a person reads it.
type AuditEntry struct {
	Commit  string    `json:"commit"`
	Parents []string  `json:"parents"`
	Time    time.Time `json:"time"`
	Clock   Clock     `json:"clock"`
	// Kind is what the call did: "change" (it changed the state), "read"
	// (it succeeded and changed nothing) or "refusal" (it failed; only
	// its audit record was written).
	Kind      string `json:"kind"`
	Tool      string `json:"tool"`
	Actor     string `json:"actor"`
	ActorType string `json:"actor_type,omitempty"`
	// Result is Codex-Result ("ok" on success); a refusal has none.
	Result string `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
	// Message is a refusal's error message (Codex-Message).
	Message string `json:"message,omitempty"`
	Target  string `json:"target,omitempty"`
	// Follows is the call this one continues (Codex-Follows).
	Follows string `json:"follows,omitempty"`
	Args    string `json:"args,omitempty"`
	Summary string `json:"summary"`
	// CutOff marks the oldest commit this repository has of a history
	// a shallow fetch cut short.
	CutOff bool `json:"cut_off,omitempty"`
	// Auth is how an agent caller proved itself (Codex-Auth): token, or
	// none or invalid for a call believed under auth.agents=warn.
	Auth string `json:"auth,omitempty"`
	// Redacted names the credentials git codex took out of what the call
	// wrote (Codex-Redacted).
	Redacted string `json:"redacted,omitempty"`
	// ReadAt is the state commit a read or refusal recorded off the state
	// saw (Codex-Read-At).
	ReadAt string `json:"read_at,omitempty"`
	// FoldedIn is the fold commit that holds a read of a day retention
	// folded (`git codex archive`): the read's own commit is gone.
	FoldedIn string `json:"folded_in,omitempty"`
}

// Kind tells changes from reads and refusals.
func (ev Event) Kind() string {
	switch {
	case ev.Get(TrailerError) != "":
		return KindRefusal
	case ev.Changed:
		return KindChange
	}
	return KindRead
}

// Entry decodes the event's audit trailers.
func (ev Event) Entry() AuditEntry {
	parents := ev.Parents
	if parents == nil {
		parents = []string{}
	}
	return AuditEntry{Kind: ev.Kind(),
		Commit: ev.Commit, Parents: parents, Time: ev.Time, Clock: ev.Clock,
		Tool: ev.Get(TrailerTool), Actor: ev.Get(TrailerActor), ActorType: ev.Get(TrailerActorType),
		Result: ev.Get(TrailerResult), Error: ev.Get(TrailerError), Message: ev.Get(TrailerMessage),
		Target: ev.Get(TrailerTarget), Follows: ev.Get(TrailerFollows), Args: ev.Get(TrailerArgs),
		Summary: ev.Summary, CutOff: ev.CutOff,
		Auth: ev.Get(TrailerAuth), Redacted: ev.Get(TrailerRedacted), ReadAt: ev.Get(TrailerReadAt),
		FoldedIn: ev.FoldedIn,
	}
}

// Unauthenticated reports a call as an agent that did not prove who it is
// (believed under auth.agents=warn; refused under required).
func (en AuditEntry) Unauthenticated() bool { return en.Auth == "none" || en.Auth == "invalid" }

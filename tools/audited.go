package tools

import (
	"context"

	"github.com/gitcodex/git-codex/gitstate"
)

// Audit says how a transaction that is no tool call (a watcher's pass, an
// escalation) is recorded: as whose, as which tool, after which commit.
// Its commit carries the same trailers a call's does, built by the same
// function (auditRecord).
type Audit struct {
	Caller Caller
	Tool   string
	// Args is the Codex-Args trailer ("": none).
	Args string
	// Follows is the commit it follows (Codex-Follows; "": none).
	Follows string
	Env     Env
	Repo    Repo
	// Keys is the table of settings. Set, the caller's agent record and
	// the settings in force are read (Call.Agent, Call.Config); nil,
	// neither is.
	Keys *ConfigKeys
}

// CallFor is the Call through which such a transaction reads, writes and
// is recorded (Call.Audit). The Call is returned even with an error (the
// caller's record or the settings could not be read), so that the error
// can be recorded.
func CallFor(tx *gitstate.Tx, a Audit) (*Call, error) {
	c := &Call{Caller: a.Caller, Tx: tx, Env: a.Env, Repo: a.Repo, tool: a.Tool, args: a.Args, follows: a.Follows, keys: a.Keys}
	if a.Keys == nil {
		return c, nil
	}
	if err := resolveCaller(c, tx); err != nil {
		return c, err
	}
	cfg, err := LoadConfig(tx, a.Keys)
	c.Config = cfg
	return c, err
}

// Audit writes the call's audit record into its transaction: e, if set,
// is the failure it records (Codex-Error), else the one marked with
// Failed, if any.
func (c *Call) Audit(e *Error) {
	if e == nil {
		e = c.failed
	}
	c.Tx.SetMeta(auditRecord(c, e))
}

// AuditOf is the audit record of a commit the call writes at another ref
// (Tx.CommitAt, an archive): recorded as the call is (its caller, tool
// and Codex-Auth), with its own target and summary.
func (c *Call) AuditOf(target, summary string) gitstate.Meta {
	ar := &Call{Caller: c.Caller, tool: c.tool, auth: c.auth}
	ar.Target(target)
	ar.summary = summary
	return auditRecord(ar, nil)
}

// Update runs fn as one transaction on st and seals what it writes (every
// credential redacted), as every call's transaction is: the way the nouns
// write the state outside a call.
func Update(ctx context.Context, st *gitstate.Store, fn func(tx *gitstate.Tx) error) (gitstate.Commit, error) {
	commit, _, err := update(ctx, st, false, fn)
	return commit, err
}

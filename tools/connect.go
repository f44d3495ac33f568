package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/gitcodex/git-codex/gitstate"
)

// What `git codex mcp` checks when it starts, and the signal it gives once
// its client is connected.
//
// A server whose caller is an agent nobody registered, or that presents a
// token that is not its caller's, would serve zero tools or refuse every
// call while its client shows it "connected": nothing would tell the
// person why the agent cannot work. So the server refuses to start (a
// non-zero exit and a message on stderr, which every MCP client reports as
// a server that failed), and the refusal is audited like a refused call.
//
// Once the server has answered its client's initialize, the agent's own
// CLI is up and wired to git codex: an instance still STARTING becomes
// ACTIVE (REVIEWING for a reviewer) in one commit. That is the signal
// spawn waits for (instance_start.go); nothing earlier says the agent got
// past its CLI's first screens.
//
// Both live here, in the framework, not in the MCP server's package
// (cmd/git-codex/mcpserver), although the server is what runs them: each
// is the registry's admission (the caller's record, its credential against
// auth.agents, what c.auth says of it) and its one audit builder
// (auditRecord) run for an entry point that is no tool. Outside tools they
// would need the Call's unexported fields (tool, origin, keys, auth) made
// public, or a second way to build an audit record; the server needs only
// two methods. And CheckServer is not the server's alone: `git codex
// setup` makes the same check before it writes an agent's MCP config.

// auditMCP is the name the server's own commits carry as Codex-Tool.
const auditMCP = "mcp"

// errNoChange ends a transaction that has nothing to record.
var errNoChange = errors.New("nothing to record")

// ServerCaller is who a starting MCP server serves.
type ServerCaller struct {
	ID   string
	Type AgentType
}

// CheckServer refuses the caller an MCP server would serve uselessly: an
// id that names no registered agent, a token that is not its credential
// (unless auth.agents is off), no credential where one is required, or an
// agent identity in a repository without git codex state. A person needs
// no record. The refusal is recorded (Codex-Tool: mcp) where the state
// can be written; a start that passes writes nothing.
func (r *Registry) CheckServer(ctx context.Context, st *gitstate.Store, o Origin) (ServerCaller, *Error) {
	out := ServerCaller{ID: o.ID}
	var refusal *Error
	_, _, err := update(ctx, st, false, func(tx *gitstate.Tx) error {
		c := &Call{Caller: Caller{ID: o.ID}, Tx: tx, Env: r.env, Repo: CodeRepoOf(st), tool: auditMCP, origin: o, keys: r.keys(), hooks: &r.hooks, kinds: r.kinds}
		e := checkServer(c, o, &out)
		if e == nil {
			return errNoChange
		}
		refusal = e
		tx.Discard()
		tx.SetMeta(auditRecord(c, e))
		return nil
	})
	switch {
	case refusal != nil:
		return out, refusal
	case errors.Is(err, errNoChange), err == nil:
		return out, nil
	case errors.Is(err, gitstate.ErrNotInitialized):
		if IsHuman(o.ID) {
			return out, nil // a person's server lists nothing until init
		}
		return out, Errorf(NotInitialized, "this repository has no git codex state, so agent %q cannot be served; run `git codex init` and register the agent first", o.ID).With("agent_id", o.ID)
	case gitstate.Unwritable(err):
		// a refusal that cannot be recorded is still a refusal
		var e *Error
		_ = st.Unrecorded(ctx, func(tx *gitstate.Tx) error {
			c := &Call{Caller: Caller{ID: o.ID}, Tx: tx, Env: r.env, Repo: CodeRepoOf(st), tool: auditMCP, origin: o, keys: r.keys(), hooks: &r.hooks, kinds: r.kinds}
			e = checkServer(c, o, &out)
			return nil
		})
		return out, e
	}
	return out, StoreError(err)
}

func checkServer(c *Call, o Origin, out *ServerCaller) *Error {
	if err := resolveCaller(c, c.Tx); err != nil {
		e := AsError(err)
		if e.Code == AgentNotFound {
			e.Message = fmt.Sprintf("%q is not a registered agent of this repository, so git codex mcp would serve it nothing; check CODEX_INSTANCE (or --as), or register it with `git codex agent add %s --type <type>`", o.ID, o.ID)
		}
		return e
	}
	out.Type = c.Caller.Type
	cfg, err := LoadConfig(c.Tx, c.keys)
	if err != nil {
		return AsError(err)
	}
	c.Config = cfg
	mode := cfg.StringValue("auth.agents")
	err = authenticate(c, o)
	if err == nil && (IsHuman(o.ID) || mode == AuthOff) {
		return nil
	}
	if IsHuman(o.ID) {
		return AsError(err) // a person acting from an agent's environment
	}
	switch c.auth {
	case authInvalid:
		// refused under warn too: the calls would run, each marked
		// invalid, and a token that is someone else's or an old one is a
		// mistake to say now. (No token at all is what warn is for:
		// believed, and audited Codex-Auth: none.)
		return Errorf(AuthFailed, "CODEX_TOKEN is not the credential of agent %s (a mistyped or rotated token, or another agent's); fix the env of its MCP config, or issue a new one with `git codex agent rotate-token %s`", o.ID, o.ID).
			With("caller", o.ID)
	case authNone:
		if err != nil {
			return Errorf(AuthFailed, "agent %s has no credential here (CODEX_TOKEN is empty) and auth.agents is required: every call would be refused. Put its token in the env of its MCP config, or issue one with `git codex agent rotate-token %s`", o.ID, o.ID).
				With("caller", o.ID)
		}
	}
	if err != nil {
		return AsError(err)
	}
	return nil
}

// MarkUp records that the instance an MCP server serves is up: its agent
// CLI started the server and the server answered its initialize. An
// instance still STARTING becomes ACTIVE (REVIEWING for a reviewer), in a
// commit naming the client; anything else writes nothing. It returns the
// status it recorded, or "".
func (r *Registry) MarkUp(ctx context.Context, st *gitstate.Store, o Origin, client string) (string, error) {
	status := ""
	_, _, err := update(ctx, st, false, func(tx *gitstate.Tx) error {
		c := &Call{Caller: Caller{ID: o.ID}, Tx: tx, Env: r.env, Repo: CodeRepoOf(st), tool: auditMCP, origin: o, keys: r.keys(), hooks: &r.hooks, kinds: r.kinds}
		if IsHuman(o.ID) || resolveCaller(c, tx) != nil || c.Agent == nil || c.Agent.Status != StatusStarting {
			return errNoChange
		}
		cfg, err := LoadConfig(tx, r.keys())
		if err != nil {
			return err
		}
		c.Config = cfg
		if authenticate(c, o) != nil {
			return errNoChange
		}
		if err := r.beforeHandler(c); err != nil {
			return err
		}
		status = c.Agent.Status
		c.Target(o.ID)
		c.Summarize("%s is up: %s connected to its git codex mcp", o.ID, client)
		tx.SetMeta(auditRecord(c, nil))
		return nil
	})
	if errors.Is(err, errNoChange) || errors.Is(err, gitstate.ErrNotInitialized) {
		return "", nil
	}
	return status, err
}

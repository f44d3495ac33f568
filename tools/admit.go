package tools

import (
	"context"
	"errors"

	"github.com/gitcodex/git-codex/gitstate"
)

// admit is the door every entry point goes through before it touches the
// state: a call (Registry.CallAs), and the registry-internal tools init,
// restore and sync. It resolves the caller in src (the call's transaction,
// or the state an internal tool works on), loads the settings in force,
// checks the caller's credential (authenticate, which also sets the
// Codex-Auth trailer) and the policy for t's permission. t is nil for a
// name that is no tool; the caller is still resolved first, so that its
// type goes into the refusal's audit record too. On success c.Config is
// set.
func (r *Registry) admit(c *Call, src configSource, o Origin, t *Tool) *Error {
	callerErr := resolveCaller(c, src)
	if t == nil {
		return r.unknown(c.tool)
	}
	if callerErr != nil {
		return AsError(callerErr)
	}
	cfg, err := LoadConfig(src, r.keys())
	if err != nil {
		return AsError(err)
	}
	c.Config = cfg
	if err := authenticate(c, o); err != nil {
		return AsError(err)
	}
	// Permission before the input: a caller who may not use the tool
	// learns that, not what was wrong with arguments it should not have
	// sent.
	if !permitted(cfg, c.Caller.Type, t.Permission) {
		return Errorf(PermissionDenied, "tool %q (permission %s) is not allowed for agent type %q; see `git codex config get policy.%s.allow`",
			t.Name, t.Permission, c.Caller.Type, c.Caller.Type).With("tool", t.Name).With("permission", t.Permission).With("agent_type", string(c.Caller.Type))
	}
	return nil
}

// resolveCaller fills in the caller's type from its agent record in src.
// People need no record.
func resolveCaller(c *Call, src recordGetter) error {
	id := c.Caller.ID
	if err := ValidateCallerID(id); err != nil {
		return Errorf(AgentNotFound, "caller %q is not a valid agent id; set --as or CODEX_INSTANCE to a registered agent", id).With("agent_id", id)
	}
	if IsHuman(id) {
		c.Caller.Type = TypeHuman
		return nil
	}
	var a Agent
	if err := src.Get(AgentPath(id), &a); err != nil {
		if errors.Is(err, gitstate.ErrNotFound) {
			return Errorf(AgentNotFound, "caller %q is not a registered agent; register it with `git codex agent add %s --type <type>`", id, id).With("agent_id", id)
		}
		return err
	}
	c.Agent, c.Caller.Type = &a, a.Type
	return nil
}

// Hooks are the steps of the call pipeline that belong to the nouns, not
// to the framework: the framework runs them at fixed points and knows
// nothing of what they do. The assembly (tools/builtin) hands them in its
// Catalog, with the tools.
type Hooks struct {
	// BeforeHandler runs inside the call's transaction once the caller
	// is admitted and the input decoded, just before the handler, in
	// order; an error refuses the call. Also run when an MCP server
	// answers its client's initialize (MarkUp): an instance's first call
	// and its server's start both prove it is up.
	BeforeHandler []func(c *Call) error
	// OnFailure runs after a failed call's refusal or failure was
	// committed (and its after-steps ran), outside the writer lock, in
	// order; each returns the latest commit of the call (the one it
	// wrote, or commit unchanged). It never changes the call's answer.
	OnFailure []func(ctx context.Context, st *gitstate.Store, c *Call, res Result, commit string) string
	// UnknownTool explains a name that is no tool, in order, the first
	// answer wins: each package answers for other seeds' names of its own
	// tools (Renamed); none, or no answer, gives TOOL_NOT_FOUND.
	UnknownTool []func(name string) *Error
	// SettleClaims runs inside a sync's merge commit, after MergeRecord
	// settled every record both sides changed: it restores the
	// one-holder invariant of the kinds that have one (kinds), recording
	// a Conflict (and telling the loser) for each claim that lost. nil:
	// nothing is settled.
	SettleClaims func(kinds KindTable, tx *gitstate.Tx, report gitstate.MergeReport) ([]Conflict, error)
	// AgentEnded runs, in order, inside the transaction of a call whose
	// noun just gave an agent's record a final status and called
	// Call.AgentEnded: what other nouns hold for that agent is let go (a
	// reviewer's active review, tools/work), without the noun that ends
	// agents (instances) calling up into them.
	AgentEnded []func(c *Call, a *Agent) error
	// Reapers run, in order, inside instance_reap's transaction
	// (Call.Reap): each finds the records of work whose process died with
	// no instance to show it (delegated sessions still RUNNING), marks them
	// failed unless dryRun, and returns their ids.
	Reapers []func(c *Call, dryRun bool) ([]string, error)
}

// AgentEnded runs the AgentEnded hooks for a, whose record the caller
// just gave a final status (in this transaction).
func (c *Call) AgentEnded(a *Agent) error {
	if c.hooks == nil {
		return nil
	}
	for _, fn := range c.hooks.AgentEnded {
		if err := fn(c, a); err != nil {
			return err
		}
	}
	return nil
}

// Reap runs the Reapers and returns the ids they found, in order.
func (c *Call) Reap(dryRun bool) ([]string, error) {
	ids := []string{}
	if c.hooks == nil {
		return ids, nil
	}
	for _, fn := range c.hooks.Reapers {
		found, err := fn(c, dryRun)
		ids = append(ids, found...)
		if err != nil {
			return ids, err
		}
	}
	return ids, nil
}

// beforeHandler runs the BeforeHandler hooks.
func (r *Registry) beforeHandler(c *Call) error {
	for _, fn := range r.hooks.BeforeHandler {
		if err := fn(c); err != nil {
			return err
		}
	}
	return nil
}

// onFailure runs the OnFailure hooks of a failed call and returns its
// latest commit.
func (r *Registry) onFailure(ctx context.Context, st *gitstate.Store, c *Call, res Result) string {
	commit := res.Commit
	if c == nil || res.Error == nil {
		return commit
	}
	for _, fn := range r.hooks.OnFailure {
		commit = fn(ctx, st, c, res, commit)
	}
	return commit
}

// unknown is the refusal of a name that is no tool.
func (r *Registry) unknown(name string) *Error {
	for _, fn := range r.hooks.UnknownTool {
		if e := fn(name); e != nil {
			return e
		}
	}
	return Errorf(ToolNotFound, "no tool named %q; list them with `git codex tools`", name).With("tool", name)
}

// Renamed is an UnknownTool step for a package whose tools other seeds
// name differently (names: theirs to ours): TOOL_NOT_FOUND naming the
// tool that does the job (details.use). They are named in the refusal,
// not served as aliases: an alias would list every such tool twice to
// every agent (tools/list is paid for in tokens each turn) and put two
// names for one call in the audit trail.
func Renamed(names map[string]string) func(name string) *Error {
	return func(name string) *Error {
		ours, ok := names[name]
		if !ok {
			return nil
		}
		return Errorf(ToolNotFound, "no tool named %q: git codex calls it %s (the same arguments; see `git codex tools %s`)", name, ours, ours).
			With("tool", name).With("use", ours)
	}
}

package tools

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/gitcodex/git-codex/gitstate"
)

// The registry-internal tools: entry points that are not calls, because
// they make the state a call runs in (init), bring it back (restore) or
// merge another clone's into it (sync). No adapter lists or calls them as
// tools (Lookup does not find them); their commands call Registry.Init,
// Restore and Sync. Like every call, they admit their caller (its record,
// its credential, the policy: admit) and record themselves through the
// one audit builder. Their permissions are state.init, state.restore and
// state.sync: people and supervisors hold all three by default ("*"),
// every other type state.sync.
const (
	permInit    = "state.init"
	permRestore = "state.restore"
	permSync    = "state.sync"
)

// internalTools are the registry-internal tools, by name.
func internalTools() map[string]*Tool {
	return map[string]*Tool{
		"init":    {Name: "init", Permission: permInit, Description: "start git codex in this repository"},
		"restore": {Name: "restore", Permission: permRestore, Description: "make the state of an earlier commit current again"},
		"sync":    {Name: "sync", Permission: permSync, Description: "merge a remote's state, and push the result"},
	}
}

// noState is the state before init: no records, so the default settings,
// and this repository's git config for the local ones.
type noState struct{ st *gitstate.Store }

func (noState) Get(string, any) error { return gitstate.ErrNotFound }

func (n noState) GitConfig() ([]gitstate.ConfigEntry, error) { return n.st.GitConfig() }

// Init creates the state: the first commit on refs/codex/state, holding an
// empty config (defaults apply until someone sets a key). The caller is
// admitted against the state it is about to create (the default policy,
// no agents yet): a person, as a rule. A refusal cannot be recorded (there
// is no state to record it in) and writes nothing. It fails with
// gitstate.ErrAlreadyInitialized when the state exists.
func (r *Registry) Init(ctx context.Context, st *gitstate.Store, o Origin) (gitstate.Commit, error) {
	commit, _, err := update(ctx, st, true, func(tx *gitstate.Tx) error {
		c := &Call{Caller: Caller{ID: o.ID}, Tx: tx, Env: r.env, Repo: CodeRepoOf(st), tool: "init", origin: o, keys: r.keys(), hooks: &r.hooks, kinds: r.kinds}
		if e := r.admit(c, tx, o, r.internal["init"]); e != nil {
			return e
		}
		c.Summarize("%s initialised git codex", o.ID)
		tx.SetMeta(auditRecord(c, nil))
		return tx.Put(PathConfig, Config{Entries: map[string]ConfigEntry{}})
	})
	return commit, err
}

// Restore makes the state of an earlier commit current again, for a
// repository whose refs/codex/state was deleted or whose tip no longer
// reads whole (gitstate.Store.Restore). The caller is admitted against
// the state being restored, the only one that reads; a refusal writes
// nothing (the tip is gone or unreadable). It is recorded like a call, as
// the tool "restore".
func (r *Registry) Restore(ctx context.Context, st *gitstate.Store, o Origin, rev string) (gitstate.Commit, error) {
	args, _ := json.Marshal(map[string]string{"commit": rev})
	c := &Call{Caller: Caller{ID: o.ID}, Env: r.env, keys: r.keys(), hooks: &r.hooks, kinds: r.kinds, Repo: CodeRepoOf(st), tool: "restore", args: redactArgs(args), origin: o}
	var refusal *Error
	err := st.ViewAt(ctx, rev, func(sn *gitstate.Snapshot) error {
		refusal = r.admit(c, sn, o, r.internal["restore"])
		return nil
	})
	if err != nil {
		return gitstate.Commit{}, err // rev names no commit (ErrNotFound), or it does not read
	}
	if refusal != nil {
		return gitstate.Commit{}, refusal
	}
	c.Summarize("%s restored the state of %s", o.ID, rev)
	c.Target(rev)
	m, _ := sealMeta(auditRecord(c, nil))
	return st.Restore(ctx, rev, m)
}

// admitTo admits the caller of internal tool t against the state at the
// tip, and records a refusal there like a refused call's. Before init (a
// fresh clone syncing its state in) and when the tip cannot be read, the
// caller is admitted against no state, as init's is. It returns the
// admitted call, whose caller, settings and Codex-Auth the tool's own
// commit carries.
func (r *Registry) admitTo(ctx context.Context, st *gitstate.Store, o Origin, t *Tool, args string) (*Call, error) {
	c := &Call{Caller: Caller{ID: o.ID}, Env: r.env, Repo: CodeRepoOf(st), tool: t.Name, args: args, origin: o, keys: r.keys(), hooks: &r.hooks, kinds: r.kinds}
	var refusal *Error
	err := st.View(ctx, func(sn *gitstate.Snapshot) error {
		if sn.Commit() == "" {
			return gitstate.ErrNotInitialized
		}
		if _, err := LoadConfig(sn, r.keys()); errors.Is(err, gitstate.ErrObjectMissing) {
			return err // the tip does not read whole: no state to admit against
		}
		refusal = r.admit(c, sn, o, t)
		return nil
	})
	if err != nil {
		*c = Call{Caller: Caller{ID: o.ID}, Env: r.env, keys: r.keys(), hooks: &r.hooks, kinds: r.kinds, Repo: CodeRepoOf(st), tool: t.Name, args: args, origin: o}
		if e := r.admit(c, noState{st}, o, t); e != nil {
			return nil, e
		}
		return c, nil
	}
	if refusal == nil {
		return c, nil
	}
	// recorded as a call's refusal is, in a commit of its own; if that
	// cannot be written, the refusal stands all the same
	_, _, _ = update(ctx, st, false, func(tx *gitstate.Tx) error {
		rc := &Call{Caller: Caller{ID: o.ID}, Tx: tx, tool: t.Name, args: args, origin: o, keys: r.keys(), hooks: &r.hooks, kinds: r.kinds}
		e := r.admit(rc, tx, o, t)
		if e == nil {
			e = refusal // the state changed meanwhile: record what was answered
		}
		tx.Discard()
		tx.SetMeta(auditRecord(rc, e))
		return nil
	})
	return nil, refusal
}

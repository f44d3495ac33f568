package tools

import (
	"context"
	"errors"
	"strings"

	"github.com/gitcodex/git-codex/gitstate"
)

// AfterFunc is work a tool does outside git once its call has committed:
// make a worktree, start a tmux session, kill a reviewer, call GitHub.
type AfterFunc func(ctx context.Context, f *Followup) error

// After registers fn to run once the call's commit is made and the writer
// lock released, so that no other agent's call waits behind it. It runs
// only if the call succeeded, in the order registered. The pattern is
// intent, effect, outcome: the handler records what it is about to do (an
// instance STARTING, with the worktree and session it will make), fn does
// it, and records the outcome with f.Record (ACTIVE, or FAILED). A crash
// between the steps leaves a record that names everything made, which is
// what `git codex cleanup` reads.
//
// fn's error becomes the call's result (the intent's commit stays). A
// handler whose output fn fills in returns a pointer, so that the call's
// result shows what fn set.
func (c *Call) After(fn AfterFunc) { c.after = append(c.after, fn) }

// Followup is what an after-step works with: the environment, the store,
// the code repository (its worktrees, its branches) and the caller, and Record to write its
// outcome.
type Followup struct {
	Env   Env
	Store *gitstate.Store
	// Repo is the code repository the store lives in.
	Repo   CodeRepo
	Caller Caller
	// Commit is the commit of the call the step follows.
	Commit string

	tool     string
	keys     *ConfigKeys // the settings the call's registry reads
	hooks    *Hooks      // the call's registry's pipeline hooks
	kinds    KindTable   // the call's registry's record kinds
	last     string      // the latest commit the call wrote
	warnings []string    // what the call's result must say about its commits (redactions)
}

// ConfigKeys is the table of settings of the call's registry.
func (f *Followup) ConfigKeys() *ConfigKeys { return f.keys }

// Config reads the settings at the tip, for a step that needs them after
// the call's commit.
func (f *Followup) Config(ctx context.Context) (*Config, error) {
	return ConfigAt(ctx, f.Store, f.keys)
}

// Record writes the step's outcome as one more transaction, audited as the
// same tool and caller, with Codex-Follows naming the call's commit. fn
// works like a handler: it reads and writes through c.Tx. If it fails, the
// transaction records the error (Codex-Error) and changes nothing else, and
// Record returns that error.
func (f *Followup) Record(ctx context.Context, fn func(c *Call) error) error {
	var ferr *Error
	// an outcome is recorded even when the call was cancelled (its client
	// went, its time limit passed): that is when it matters most
	commit, reds, err := update(context.WithoutCancel(ctx), f.Store, false, func(tx *gitstate.Tx) error {
		c := &Call{Caller: f.Caller, Tx: tx, Env: f.Env, tool: f.tool, follows: f.Commit, keys: f.keys, hooks: f.hooks, kinds: f.kinds}
		err := resolveCaller(c, tx)
		if err == nil {
			c.Config, err = LoadConfig(tx, f.keys)
		}
		if err == nil {
			err = fn(c)
		}
		if err != nil {
			ferr = AsError(err)
			tx.Discard()
			tx.SetMeta(auditRecord(c, ferr))
			return nil
		}
		if c.summary == "" {
			// an outcome says what it follows, never only "tool: actor"
			c.Summarize("%s: the outcome of %.12s", f.Caller.ID, f.Commit)
		}
		tx.SetMeta(auditRecord(c, c.failed))
		return nil
	})
	if err != nil {
		return StoreError(err)
	}
	f.last = commit.Hash
	f.warnings = append(f.warnings, redactionWarnings(reds)...)
	if ferr != nil {
		return ferr
	}
	return nil
}

// Failed marks an outcome that is a failure although fn records it (a
// call kept to retry, with its last error): the commit keeps fn's writes
// and carries e's code and message, so `git codex log --errors` lists it.
func (c *Call) Failed(e *Error) { c.failed = e }

// runAfter runs a successful call's after-steps and returns the call's
// final result: the first step's error, or the result with the latest
// commit.
func (r *Registry) runAfter(ctx context.Context, st *gitstate.Store, c *Call, res Result) Result {
	f := &Followup{Env: r.env, Store: st, Repo: CodeRepoOf(st), Caller: c.Caller, Commit: res.Commit, tool: c.tool, keys: r.keys(), hooks: &r.hooks, kinds: r.kinds, last: res.Commit}
	for _, fn := range c.after {
		if err := safeAfter(ctx, f, fn); err != nil {
			return Result{Error: AsError(err), Commit: f.last, Warnings: append(res.Warnings, f.warnings...)}
		}
	}
	res.Commit = f.last
	res.Warnings = append(res.Warnings, f.warnings...)
	return res
}

// recordUndo writes one more audit commit for a call whose undo steps
// failed (they ran after its refusal was committed, outside the lock): the
// trail then says what is left behind for `git codex cleanup`.
func (r *Registry) recordUndo(ctx context.Context, st *gitstate.Store, c *Call, commit string, errs []error) string {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	next, _, err := update(ctx, st, false, func(tx *gitstate.Tx) error {
		uc := &Call{Caller: c.Caller, Tx: tx, tool: c.tool, follows: commit, keys: c.keys, hooks: c.hooks, kinds: c.kinds}
		uc.Summarize("%s: undo failed; `git codex cleanup` removes what is left", c.Caller.ID)
		tx.SetMeta(auditRecord(uc, nil, gitstate.Trailer{Key: gitstate.TrailerUndoError, Value: strings.Join(msgs, "; ")}))
		return nil
	})
	if err != nil {
		return commit // the refusal stands; the leftovers are still cleanup's to find
	}
	return next.Hash
}

// errAfterPanicked is returned for an after-step that panicked.
var errAfterPanicked = errors.New("after-step panicked")

// safeAfter runs fn, turning a panic into an error so that one bad step
// cannot take an MCP server down.
func safeAfter(ctx context.Context, f *Followup, fn AfterFunc) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = Errorf(InternalError, "%v: %v", errAfterPanicked, p)
		}
	}()
	return fn(ctx, f)
}

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/google/jsonschema-go/jsonschema"
)

// Tool is one operation, defined once with Define.
type Tool struct {
	// Name is the MCP tool name and the argument of `git codex call`.
	Name string
	// Permission is the key the policy's globs match, e.g. "mail.send".
	Permission string
	// Description tells agents what the tool does and when to use it.
	Description string
	// CLI says where the tool appears in the command tree.
	CLI CLI
	// Hints say what a call does to the state, for clients that ask before
	// side effects (MCP's tool annotations); set them with Hint.
	Hints   Hints
	inType  reflect.Type
	outType reflect.Type
	input   func() inputSchema        // computed once, on first use
	output  func() *jsonschema.Schema // computed once, on first use: a call never needs it
	run     func(ctx context.Context, c *Call, in any) (any, error)
	prepare func(ctx context.Context, p Prep, in any) any
}

// Prep is what a tool's prepare step (Tool.Prepare) works with.
type Prep struct {
	Env  Env
	Repo Repo
}

// Prepare registers fn to run before each call's transaction, outside the
// state's writer lock, with the call's decoded input (in is a *In; fn is
// not run for input that does not decode, which the call then refuses).
// What fn returns is the handler's Call.Prepared. It is for what is slow or
// can block and needs no state: reading files of the working tree, which
// anyone who can write there decides (a FIFO blocks open() for ever), must
// never hold up every other writer of the repository. fn runs before the
// caller's permission is checked: it reads, and changes nothing.
func (t *Tool) Prepare(fn func(ctx context.Context, p Prep, in any) any) *Tool {
	t.prepare = fn
	return t
}

// CLI places a tool in the command tree: Path is the command words ("mail
// send") and Args names the input fields (their JSON names) taken as
// positional arguments, in order; every other field is a flag.
type CLI struct {
	Path string
	Args []string
	// Envelope makes --json print the call's whole envelope
	// ({"ok":true,"data":...}, as `git codex call` does) rather than the
	// data alone: for commands scripts drive like calls (spawn).
	Envelope bool
}

// Call is what a handler sees: who is calling, the transaction, the
// settings in force, and the world outside the state (Env), which a
// handler only touches through After, outside the writer lock.
type Call struct {
	Caller Caller
	Agent  *Agent // the caller's record; nil for people
	Tx     *gitstate.Tx
	Config *Config
	Env    Env
	// Repo is the code repository the state lives in: quick reads of its
	// refs (resolving a revision, whether a branch exists) that a handler
	// needs before it records an intent.
	Repo Repo

	tool    string
	args    string // the redacted arguments, for the Codex-Args trailer
	follows string // the call's first commit, for the commits of its outcome
	summary string
	failed  *Error // an outcome recorded as a failure (Followup.Record)
	target  string
	after   []AfterFunc
	// auth is the Codex-Auth trailer (authenticate); authenticated is
	// true when the caller presented its agent's valid credential.
	auth          string
	authenticated bool
	origin        Origin
	// auditArgs, if set, replaces the arguments in the Codex-Args
	// trailer (a value that stays on this machine: config_set of a
	// local key).
	auditArgs string
	// keys is the registry's table of settings, for what loads the config
	// again (an escalation, a check of the MCP server's caller).
	keys *ConfigKeys
	// hooks are the registry's pipeline hooks, for the steps a noun runs
	// from inside its handler (AgentEnded, Reap); nil in a Call made by
	// CallFor, which runs none.
	hooks *Hooks
	// kinds are the registry's record kinds, for a handler that hands the
	// state's layout to the store (Layout); nil in a Call made by CallFor.
	kinds KindTable
	// warnings go into the call's result (Result.Warnings), whatever its
	// outcome.
	warnings []string
	// Prepared is what the tool's prepare step returned (Tool.Prepare),
	// nil when it has none.
	Prepared any
}

// Summarize sets the commit's summary line (after the tool name).
func (c *Call) Summarize(format string, args ...any) {
	c.summary = fmt.Sprintf(format, args...)
}

// Target records the id of the record the call created or changed, in the
// Codex-Target trailer.
func (c *Call) Target(id string) { c.target = id }

// ToolName is the name of the tool called (or of the work recorded as
// one, CallFor).
func (c *Call) ToolName() string { return c.tool }

// Authenticated reports whether the caller presented its agent's valid
// credential.
func (c *Call) Authenticated() bool { return c.authenticated }

// ConfigKeys is the table of settings of the call's registry, for what
// reads the settings again.
func (c *Call) ConfigKeys() *ConfigKeys { return c.keys }

// Layout is the state's layout, read from the registry's record kinds
// (KindTable.Layout): what the store checks a record archive against
// before it believes one (gitstate Tx.RestoreArchived).
func (c *Call) Layout() *gitstate.Layout { return c.kinds.Layout() }

// RolePSK is the pre-shared key this machine holds for role ("": none),
// from the caller's origin.
func (c *Call) RolePSK(role string) string { return c.origin.psk(role) }

// inputSchema is a tool's input schema, inferred from its Go type, and its
// resolved form that validates calls.
type inputSchema struct {
	in       *jsonschema.Schema
	resolved *jsonschema.Resolved
}

// Define builds a tool from a typed handler. The input and output schemas
// are inferred from In and Out (field descriptions come from `jsonschema`
// tags; fields without omitempty are required), on first use: inferring
// them for every tool at start-up would cost each short CLI run ~13 ms.
// A type without a schema panics then; TestSchemas infers every builtin
// tool's, so a bad definition fails the tests, not a user's call.
func Define[In, Out any](name, permission, description string, cli CLI, h func(ctx context.Context, c *Call, in In) (Out, error)) *Tool {
	return &Tool{
		Name:        name,
		Permission:  permission,
		Description: description,
		CLI:         cli,
		inType:      reflect.TypeFor[In](),
		outType:     reflect.TypeFor[Out](),
		input: sync.OnceValue(func() inputSchema {
			in, err := jsonschema.For[In](schemaOptions())
			if err != nil {
				panic(fmt.Sprintf("tools: %s input schema: %v", name, err))
			}
			nonNullable(in)
			resolved, err := in.Resolve(nil)
			if err != nil {
				panic(fmt.Sprintf("tools: %s resolve schema: %v", name, err))
			}
			return inputSchema{in: in, resolved: resolved}
		}),
		output: sync.OnceValue(func() *jsonschema.Schema {
			out, err := jsonschema.For[Out](schemaOptions())
			if err != nil {
				panic(fmt.Sprintf("tools: %s output schema: %v", name, err))
			}
			return PortableOutput(out)
		}),
		run: func(ctx context.Context, c *Call, in any) (any, error) {
			return h(ctx, c, *in.(*In))
		},
	}
}

// schemaOptions infer a json.RawMessage (a record kept as it was, e.g. a
// conflict's lost version) as any JSON value: by default it is a byte
// slice, an array of integers, which its JSON never is.
func schemaOptions() *jsonschema.ForOptions {
	return &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {},
	}}
}

// Hints say what a call does besides writing its audit record. The zero
// value is the cautious default: it may change or remove records, and
// repeating it may do more.
type Hints struct {
	// ReadOnly: the call changes nothing but the audit trail.
	ReadOnly bool
	// Additive: the call only adds records; it never changes or removes
	// one (meaningless with ReadOnly).
	Additive bool
	// Idempotent: calling again with the same arguments changes nothing
	// more.
	Idempotent bool
}

// Hint sets the tool's hints; definitions chain it onto Define.
func (t *Tool) Hint(h Hints) *Tool {
	t.Hints = h
	return t
}

// InputSchema is the JSON schema of the tool's input; both adapters
// publish and enforce it.
func (t *Tool) InputSchema() *jsonschema.Schema { return t.input().in }

// OutputSchema is the JSON schema of the data a successful call returns.
func (t *Tool) OutputSchema() *jsonschema.Schema { return t.output() }

// InputType is the Go type of the tool's input, for adapters that build
// flags from its fields.
func (t *Tool) InputType() reflect.Type { return t.inType }

// Registry holds the tools by name, and the environment they reach the
// outside world through.
type Registry struct {
	tools map[string]*Tool
	// internal are the registry-internal tools (entry.go): init, restore
	// and sync, admitted like calls but not called as tools.
	internal map[string]*Tool
	env      Env
	hooks    Hooks
	kinds    KindTable
	keys     func() *ConfigKeys
}

// Register adds a tool; it panics if the name is taken.
func (r *Registry) Register(t *Tool) {
	if _, dup := r.tools[t.Name]; dup {
		panic("tools: duplicate tool " + t.Name)
	}
	r.tools[t.Name] = t
}

// Lookup finds a tool by name.
func (r *Registry) Lookup(name string) (*Tool, bool) {
	t, ok := r.tools[name]
	return t, ok
}

// All returns every tool sorted by name.
func (r *Registry) All() []*Tool {
	out := make([]*Tool, 0, len(r.tools))
	for _, t := range r.tools {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Result is a call's answer, the same for both adapters:
// {"ok":true,"data":...} or {"ok":false,"error":{code,message,details}}.
type Result struct {
	OK    bool   `json:"ok"`
	Data  any    `json:"data,omitempty"`
	Error *Error `json:"error,omitempty"`
	// Commit is the audit commit the call wrote ("" if it could not write
	// one, e.g. before init).
	Commit string `json:"-"`
	// Notice says what the caller should know besides the answer, e.g.
	// that a read was answered without its audit record.
	Notice string `json:"notice,omitempty"`
	// Warnings say what the caller should know about how the call was
	// recorded, whether it succeeded or not: a credential redacted from
	// what it wrote, a call as an agent that did not prove who it is.
	Warnings []string `json:"warnings,omitempty"`
	// Timestamp is when the call answered (seed 003's envelope field),
	// RFC 3339 in UTC.
	Timestamp string `json:"timestamp,omitempty"`
}

// CallAs runs the named tool for the caller o with raw JSON arguments, as
// one transaction on st. o is the caller as the adapter knows it, with its
// credentials (CODEX_TOKEN, the agent environment, local PSKs): every
// adapter passes it whole, so a call is authenticated the same way from
// the CLI, MCP, its prompts and the web page. Every outcome that can be
// recorded is: unknown tools, bad input, refusals and failures all commit
// an audit record with their error code and change nothing else. A tool
// that works outside git (see Call.After) does that once the call has
// committed, and records the outcome in one more commit; undo steps that
// fail are recorded too.
func (r *Registry) CallAs(ctx context.Context, st *gitstate.Store, o Origin, name string, args json.RawMessage) Result {
	tctx, limit := newCallLimit(ctx)
	defer limit.stop()
	res, c := r.callAs(ctx, tctx, limit, st, o, name, args)
	return answer(res, c, name)
}

// answer finishes a call's envelope: the time it answered (seed 003's
// timestamp), and on failure the tool and the calling instance (seed
// 000's tool_name and instance_id).
func answer(res Result, c *Call, name string) Result {
	res.Timestamp = Timestamp(time.Now())
	if res.Error != nil {
		e := *res.Error // the handler's error may be shared: never write into it
		e.ToolName = redactName(name)
		if c != nil && c.Agent != nil {
			e.InstanceID = c.Agent.ID
		}
		res.Error = &e
	}
	return res
}

// Timestamp is t as envelopes carry it: RFC 3339 in UTC, to the
// millisecond (as JavaScript's toISOString, seed 003's).
func Timestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// callAs runs the call: ctx for its transaction and records, tctx (ctx
// bounded by limit) for its handler and its work outside git.
func (r *Registry) callAs(ctx, tctx context.Context, limit *callLimit, st *gitstate.Store, o Origin, name string, args json.RawMessage) (Result, *Call) {
	var res Result
	var c *Call
	repo := CodeRepoOf(st)
	prepared := r.prepare(tctx, repo, name, args)
	var commit gitstate.Commit
	var reds []Redaction
	try := func() error {
		var err error
		commit, reds, err = update(ctx, st, false, func(tx *gitstate.Tx) error {
			res, c = r.run(tctx, tx, o, name, args, repo, prepared, limit)
			return nil
		})
		return err
	}
	err := try()
	if lockContention(err) {
		err = retryContended(tctx, st, r.keys(), name, err, try)
		if timedOut(tctx) {
			return Result{Error: limit.err(name, "it kept finding the state's ref locked or moved by another program, and wrote nothing", AsError(StoreError(err)))}, c
		}
	}
	if gitstate.Unwritable(err) {
		return r.unrecorded(tctx, st, o, name, args, err, prepared), c
	}
	if err != nil {
		return Result{Error: StoreError(err)}, c
	}
	res.Commit = commit.Hash
	res.Warnings = append(res.Warnings, redactionWarnings(reds)...)
	if len(commit.UndoErrors) > 0 {
		res.Commit = r.recordUndo(ctx, st, c, commit.Hash, commit.UndoErrors)
	}
	if res.OK && len(c.after) > 0 {
		res = r.runAfter(tctx, st, c, res)
		if !res.OK && timedOut(tctx) {
			res.Error = limit.err(name, "its work outside git was stopped and recorded", res.Error)
		}
	}
	if !res.OK {
		res.Commit = r.onFailure(ctx, st, c, res)
	}
	return res, c
}

// unrecorded answers a call when the repository cannot be written (werr):
// a read is answered from the tip without its audit commit, and says so; a
// call that changes the state is refused with READ_ONLY.
func (r *Registry) unrecorded(ctx context.Context, st *gitstate.Store, o Origin, name string, args json.RawMessage, werr error, prepared any) Result {
	var res Result
	var c *Call
	err := st.Unrecorded(ctx, func(tx *gitstate.Tx) error {
		res, c = r.run(ctx, tx, o, name, args, CodeRepoOf(st), prepared, nil)
		if len(c.after) > 0 { // work outside git is never done unrecorded
			return gitstate.ErrWouldWrite
		}
		return nil
	})
	switch {
	case errors.Is(err, gitstate.ErrWouldWrite):
		return Result{Error: Errorf(ReadOnly, "the repository cannot be written (%v), and %s changes the state; nothing was done. Make .git writable (or free disk space) and call again", werr, name).With("tool", name)}
	case err != nil:
		return Result{Error: StoreError(err)}
	}
	res.Notice = fmt.Sprintf("answered without its audit record: the repository cannot be written (%v)", werr)
	return res
}

// StoreError is the structured form of an error from opening, reading or
// writing the store, with a hint; adapters that touch the store directly
// use it too.
func StoreError(err error) *Error {
	var te *Error
	var unreadable *gitstate.UnreadableError
	var refused *gitstate.RefusedError
	switch {
	case errors.As(err, &te):
		return te
	case errors.As(err, &refused) && errors.Is(err, gitstate.ErrNotRepository):
		return Errorf(NotRepository, "git says %s is not a git repository (%s); nothing was read or written", refused.Dir, refused.Reason)
	case errors.As(err, &refused):
		return Errorf(RepositoryRefused, "%v; nothing was read or written", refused)
	case errors.Is(err, gitstate.ErrNotInitialized):
		return Errorf(NotInitialized, "this repository has no git codex state; run `git codex init` first")
	case errors.Is(err, gitstate.ErrNotRepository):
		return Errorf(NotRepository, "not inside a git repository; cd into one (or run `git init`) and try again")
	case errors.As(err, &unreadable):
		e := Errorf(StateUnreadable, "%v", err).With("tip", unreadable.Tip)
		if unreadable.LastReadable != "" {
			e = e.With("last_readable", unreadable.LastReadable)
		}
		return e
	case errors.Is(err, gitstate.ErrHistoryCutOff):
		return Errorf(HistoryCutOff, "%v", err)
	case errors.Is(err, gitstate.ErrUnsupportedRepository):
		return Errorf(UnsupportedRepo, "%v; nothing was written. Use git codex in a repository made with the default format (`git init --object-format=sha1`)", err)
	}
	return Errorf(InternalError, "%v", err)
}

// prepare runs the tool's prepare step, if it has one, before the call's
// transaction (Tool.Prepare).
func (r *Registry) prepare(ctx context.Context, repo Repo, name string, args json.RawMessage) (out any) {
	t, ok := r.Lookup(name)
	if !ok || t.prepare == nil {
		return nil
	}
	in, e := t.Decode(args)
	if e != nil {
		return nil // refused inside the transaction, in its turn
	}
	defer func() {
		if recover() != nil {
			out = nil // the handler does without (and meets the panic's cause itself)
		}
	}()
	return t.prepare(ctx, Prep{Env: r.env, Repo: repo}, in)
}

// run is one call inside its transaction. It returns the Call too, for
// the steps that follow the commit (After).
func (r *Registry) run(ctx context.Context, tx *gitstate.Tx, o Origin, name string, args json.RawMessage, repo Repo, prepared any, limit *callLimit) (res Result, c *Call) {
	c = &Call{Caller: Caller{ID: o.ID}, Tx: tx, Env: r.env, keys: r.keys(), hooks: &r.hooks, kinds: r.kinds, Repo: repo, tool: name, args: redactArgs(args), origin: o, Prepared: prepared}
	fail := func(e *Error) Result {
		tx.Discard()
		c.after = nil
		tx.SetMeta(auditRecord(c, e))
		return Result{Error: e, Warnings: c.warnings}
	}
	defer func() {
		if p := recover(); p != nil {
			res = fail(Errorf(InternalError, "tool %s panicked: %v", name, p))
		}
	}()
	t, _ := r.Lookup(name)
	if e := r.admit(c, tx, o, t); e != nil {
		return fail(e), c
	}
	limit.arm(c.Config.toolTimeout(ctx, name))
	if limit.expired() { // the wait for the writer lock took it all
		return fail(limit.err(name, "it waited for the state's writer lock that long, and did nothing", nil)), c
	}
	in, ierr := t.Decode(args)
	if ierr != nil {
		return fail(ierr), c
	}
	if err := r.beforeHandler(c); err != nil {
		return fail(AsError(err)), c
	}
	out, err := t.run(ctx, c, in)
	if limit.expired() { // nothing commits after the deadline
		var cause *Error
		if err != nil {
			cause = AsError(err)
		}
		return fail(limit.err(name, "nothing it would have written was kept", cause)), c
	}
	if err != nil {
		return fail(AsError(err)), c
	}
	tx.SetMeta(auditRecord(c, nil))
	return Result{OK: true, Data: out, Warnings: c.warnings}, c
}

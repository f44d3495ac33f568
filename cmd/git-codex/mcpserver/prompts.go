package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/prompt"
	"github.com/gitcodex/git-codex/tools/prompts"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// promptWatchEvery is how often a session's watcher looks for changes in
// the registry's folders (a walk of .agent/<agent>, stats only).
const promptWatchEvery = time.Second

// promptServer offers the prompt registry through MCP's prompts
// capability: every command of every agent under .agent (and the
// built-ins) is a prompt named c1.c2.c3 (agent.c1.c2.c3 for agents other
// than climpt) whose arguments are the command's options. prompts/get runs
// prompt_execute, so it is audited and checked like any call. The list
// follows the registry: after prompt_reload, and when a session's watcher
// sees its files change, the prompts are replaced and go-sdk sends
// notifications/prompts/list_changed.
type promptServer struct {
	srv    *mcp.Server
	reg    *tools.Registry
	st     *gitstate.Store
	origin tools.Origin // who asks, with the credential it presented
	logger *slog.Logger
	root   string
	every  time.Duration

	mu       sync.Mutex
	names    map[string][]string         // prompt names served, by agent
	sessions map[*mcp.ServerSession]bool // sessions with a watcher
}

// withPromptCache gives the registry's environment a cache of prompt
// catalogs if it has none: a server keeps catalogs (and their search
// indexes) between calls, and watches the same ones it serves.
func withPromptCache(reg *tools.Registry) *tools.Registry {
	env := reg.Env()
	if env.Prompts != nil {
		return reg
	}
	env.Prompts = prompts.NewCache()
	return reg.WithEnv(env)
}

// servePrompts adds the registry's prompts (reg has a prompt cache) to srv and keeps them current.
func servePrompts(srv *mcp.Server, reg *tools.Registry, st *gitstate.Store, o tools.Origin, logger *slog.Logger) *promptServer {
	ps := &promptServer{srv: srv, reg: reg, st: st, origin: o, logger: logger, root: st.WorkDir(), every: promptWatchEvery,
		names: map[string][]string{}, sessions: map[*mcp.ServerSession]bool{}}
	cache := reg.Env().Prompts
	cache.Watch(func(root string, cat *prompts.Catalog) {
		if root == ps.root {
			ps.sync(cat)
		}
	})
	for _, agent := range prompts.Agents(ps.root) {
		if cat, ok := cache.Loaded(ps.root, agent); ok {
			ps.sync(cat)
		} else {
			cache.Reload(ps.root, agent) // syncs through the watch
		}
	}
	srv.AddReceivingMiddleware(ps.watchSessions)
	return ps
}

// promptName is the MCP name of a command: C3L words cannot hold dots,
// so the name splits back unambiguously.
func promptName(agent string, c *prompts.Command) string {
	name := c.C1 + "." + c.C2 + "." + c.C3
	if agent != prompts.DefaultAgent {
		name = agent + "." + name
	}
	return name
}

// sync replaces the agent's prompts with the catalog's commands; go-sdk
// notifies the sessions that the list changed.
func (ps *promptServer) sync(cat *prompts.Catalog) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	keep := map[string]bool{}
	var names []string
	for _, c := range cat.Commands() {
		name := promptName(cat.Agent, c)
		keep[name] = true
		names = append(names, name)
		ps.srv.AddPrompt(ps.prompt(name, c), ps.handler(cat.Agent, c.C1, c.C2, c.C3))
	}
	var gone []string
	for _, n := range ps.names[cat.Agent] {
		if !keep[n] {
			gone = append(gone, n)
		}
	}
	if len(gone) > 0 {
		ps.srv.RemovePrompts(gone...)
	}
	ps.names[cat.Agent] = names
}

// prompt describes a command as an MCP prompt.
func (ps *promptServer) prompt(name string, c *prompts.Command) *mcp.Prompt {
	p := &mcp.Prompt{Name: name, Title: c.Title, Description: c.Description}
	for _, a := range c.Arguments() {
		p.Arguments = append(p.Arguments, &mcp.PromptArgument{Name: a[0], Description: a[1]})
	}
	p.Arguments = append(p.Arguments, &mcp.PromptArgument{Name: "task", Description: "a task id: fills the task's id, title and description"})
	return p
}

// handler renders the command through prompt_execute: the arguments are
// its options (task is the task to fill in). A refusal is a JSON-RPC error
// carrying the tool's error (code, message, details) as its data.
func (ps *promptServer) handler(agent, c1, c2, c3 string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		in := prompt.PromptExecuteIn{Agent: agent, C1: c1, C2: c2, C3: c3, Options: map[string]string{}}
		for k, v := range req.Params.Arguments {
			if k == "task" {
				in.Task = v
				continue
			}
			in.Options[k] = v
		}
		args, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		res := ps.reg.CallAs(ctx, ps.st, ps.origin, "prompt_execute", args)
		if !res.OK {
			data, _ := json.Marshal(res.Error)
			code := int64(jsonrpc.CodeInvalidParams)
			if res.Error.Code == tools.InternalError || res.Error.Code == tools.ExecutionFailed || res.Error.Code == tools.RegistryLoadFailed {
				code = jsonrpc.CodeInternalError
			}
			return nil, &jsonrpc.Error{Code: code, Message: fmt.Sprintf("%s: %s", res.Error.Code, res.Error.Message), Data: data}
		}
		out := res.Data.(prompt.PromptExecuted)
		return &mcp.GetPromptResult{
			Description: fmt.Sprintf("%s %s %s (%s)", out.C1, out.C2, out.C3, out.Template),
			Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: out.Prompt}}},
		}, nil
	}
}

// watchSessions starts a watcher for each session on its first request;
// it runs until the session ends.
func (ps *promptServer) watchSessions(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
			ps.mu.Lock()
			started := ps.sessions[ss]
			ps.sessions[ss] = true
			ps.mu.Unlock()
			if !started {
				done := make(chan struct{})
				go func() {
					ss.Wait()
					close(done)
					ps.mu.Lock()
					delete(ps.sessions, ss)
					ps.mu.Unlock()
				}()
				go ps.watch(done)
			}
		}
		return next(ctx, method, req)
	}
}

// watch looks at the registry's folders every ps.every until done: an
// agent's folder that changed is reloaded (and its prompts replaced by the
// cache's watch), a new agent folder is loaded.
func (ps *promptServer) watch(done <-chan struct{}) {
	t := time.NewTicker(ps.every)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			for _, agent := range prompts.Agents(ps.root) {
				ps.reg.Env().Prompts.Refresh(ps.root, agent)
			}
			ps.dropVanished()
		}
	}
}

// dropVanished removes the prompts of agents whose folders are gone.
func (ps *promptServer) dropVanished() {
	present := map[string]bool{}
	for _, a := range prompts.Agents(ps.root) {
		present[a] = true
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var agents []string
	for a := range ps.names {
		if !present[a] {
			agents = append(agents, a)
		}
	}
	sort.Strings(agents)
	for _, a := range agents {
		if len(ps.names[a]) > 0 {
			ps.srv.RemovePrompts(ps.names[a]...)
		}
		delete(ps.names, a)
	}
}

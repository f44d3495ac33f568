// Package prompt is git codex's prompt tools (prompt_search,
// prompt_describe, prompt_execute, prompt_reload, one file each): seed
// 004's registry of instructions, read by package tools/prompts from the
// working tree, served through the framework. It changes no state. The
// one thing it reads of another noun, a task's title and description for
// prompt_execute's {codex_task_*}, comes through a TaskReader the assembly
// hands Catalog, because tasks (tools/work) sit above it.
package prompt

import (
	"context"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/prompts"
)

// The prompt tools serve seed 004's registry (search → describe →
// execute, and reload) from the working tree of the store's repository:
// .agent/<agent>/registry.json and its templates, plus git codex's own
// built-in prompts. They change no state; their audit commit is their only
// write. See docs/PROMPTS.md.

// Task is what prompt_execute fills {codex_task_id}, {codex_task_title}
// and {codex_task_description} with.
type Task struct {
	ID, Title, Description string
}

// TaskReader reads the task prompt_execute's task names, inside the call's
// transaction, failing with the task noun's own error (RESOURCE_NOT_FOUND)
// when there is none. Tasks live above this package (tools/work), so the
// assembly passes their reader to Catalog rather than prompt importing them.
type TaskReader func(tx *gitstate.Tx, id string) (Task, error)

// Catalog is the prompt tools, for the assembly (tools/builtin); tasks
// reads the task prompt_execute names.
func Catalog(tasks TaskReader) tools.Catalog {
	return tools.Catalog{Tools: []*tools.Tool{PromptSearch, PromptDescribe, PromptExecute(tasks), PromptReload}}
}

// promptCache is the environment's cache of catalogs, or a fresh one.
func promptCache(c *tools.Call) *prompts.Cache { return envPrompts(c.Env) }

func envPrompts(env tools.Env) *prompts.Cache {
	if env.Prompts != nil {
		return env.Prompts
	}
	return prompts.NewCache()
}

// promptPrep is what the prompt tools read from the working tree before
// their transaction (preparePrompts): the registry, files an agent can
// write, is never read under the state's writer lock.
type promptPrep struct {
	root, agent string
	cat         *prompts.Catalog
	branch      string // the working tree's branch (headBranch)
	// prompt_execute's command, and its template as read
	cmd    *prompts.Command
	tpl    prompts.Template
	tplErr error
}

// preparePrompts loads the catalog a prompt tool's call names (reloads it
// for prompt_reload), and for prompt_execute reads the template it will
// render and the branch checked out.
func preparePrompts(ctx context.Context, p tools.Prep, in any) any {
	root := ""
	if p.Repo != nil {
		root = p.Repo.WorkDir()
	}
	var agent string
	reload := false
	var exec *PromptExecuteIn
	switch x := in.(type) {
	case *PromptSearchIn:
		agent = x.Agent
	case *PromptCommandIn:
		agent = x.Agent
	case *PromptExecuteIn:
		agent, exec = x.Agent, x
	case *PromptReloadIn:
		agent, reload = x.Agent, true
	default:
		return nil
	}
	agent, err := promptAgent(agent)
	if err != nil {
		return nil
	}
	pp := &promptPrep{root: root, agent: agent}
	if reload {
		pp.cat = envPrompts(p.Env).Reload(root, agent)
	} else {
		pp.cat = envPrompts(p.Env).Get(root, agent)
	}
	if exec != nil {
		pp.branch = headBranch(root)
		if cmd, ok := pp.cat.Lookup(exec.C1, exec.C2, exec.C3); ok {
			pp.cmd = cmd
			pp.tpl, pp.tplErr = pp.cat.Template(cmd, exec.Options)
		}
	}
	return pp
}

// catalog is agent's catalog: as read before the transaction, or (a call
// that had no prepare step) read now.
func catalog(c *tools.Call, agent string, reload bool) *prompts.Catalog {
	if pp, ok := c.Prepared.(*promptPrep); ok && pp.agent == agent && pp.root == workDir(c) {
		return pp.cat
	}
	if reload {
		return promptCache(c).Reload(workDir(c), agent)
	}
	return promptCache(c).Get(workDir(c), agent)
}

// workDir is the working tree the registry is read from: the store's
// repository's ("" for a bare one).
func workDir(c *tools.Call) string {
	if c.Repo == nil {
		return ""
	}
	return c.Repo.WorkDir()
}

// promptAgent checks an agent name; "" is the default.
func promptAgent(agent string) (string, error) {
	if agent == "" {
		return prompts.DefaultAgent, nil
	}
	if err := prompts.ValidName("agent", agent); err != nil {
		return "", tools.Errorf(tools.InvalidInput, "%v", err).With("field", "agent")
	}
	return agent, nil
}

// promptCommand finds the command in named, loading its agent's catalog.
// A name that could not be a folder is INVALID_INPUT; a template left out
// for a broken front matter, or a name missing while registry.json could
// not be read, is REGISTRY_LOAD_FAILED; otherwise COMMAND_NOT_FOUND.
func promptCommand(c *tools.Call, in PromptCommandIn) (*prompts.Catalog, *prompts.Command, error) {
	agent, err := promptAgent(in.Agent)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range [][2]string{{"c1", in.C1}, {"c2", in.C2}, {"c3", in.C3}} {
		if err := prompts.ValidName(f[0], f[1]); err != nil {
			return nil, nil, tools.Errorf(tools.InvalidInput, "%v", err).With("field", f[0])
		}
	}
	cat := catalog(c, agent, false)
	cmd, ok := cat.Lookup(in.C1, in.C2, in.C3)
	if ok {
		return cat, cmd, nil
	}
	if p, broken := cat.Broken(in.C1, in.C2, in.C3); broken {
		return nil, nil, loadFailed(cat, p).With("c1", in.C1).With("c2", in.C2).With("c3", in.C3)
	}
	for _, p := range cat.Problems {
		if p.Path == prompts.RegistryPath(agent) {
			return nil, nil, loadFailed(cat, p).With("c1", in.C1).With("c2", in.C2).With("c3", in.C3)
		}
	}
	return nil, nil, tools.Errorf(tools.CommandNotFound, "no command %q in %s's registry; find one with `git codex prompt search <words>`", prompts.Key(in.C1, in.C2, in.C3), agent).
		With("agent", agent).With("c1", in.C1).With("c2", in.C2).With("c3", in.C3).With("config", prompts.ConfigName(agent, in.C1))
}

// loadFailed is REGISTRY_LOAD_FAILED for a problem of cat.
func loadFailed(cat *prompts.Catalog, p prompts.Problem) *tools.Error {
	e := tools.Errorf(tools.RegistryLoadFailed, "failed to load %s's prompt registry: %s; fix it and run `git codex prompt reload`", cat.Agent, p).
		With("agent", cat.Agent).With("path", p.Path).With("cause", p.Cause)
	if p.Line > 0 {
		e = e.With("line", p.Line)
	}
	if len(cat.Problems) > 1 {
		all := make([]string, len(cat.Problems))
		for i, q := range cat.Problems {
			all[i] = q.String()
		}
		sort.Strings(all)
		e = e.With("problems", all)
	}
	return e
}

// headBranch is the branch checked out in the working tree workDir ("" when
// detached or unknown), read from its HEAD file: .git/HEAD, or the HEAD of
// the git dir a linked worktree's .git file points at.
func headBranch(workDir string) string {
	if workDir == "" {
		return ""
	}
	gitDir := filepath.Join(workDir, ".git")
	if b, err := prompts.ReadFile(gitDir, 4096); err == nil { // a linked worktree: "gitdir: <path>"
		if d, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: "); ok {
			if !filepath.IsAbs(d) {
				d = filepath.Join(workDir, d)
			}
			gitDir = d
		}
	}
	head, err := prompts.ReadFile(filepath.Join(gitDir, "HEAD"), 4096)
	if err != nil {
		return ""
	}
	branch, _ := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: refs/heads/")
	if branch == strings.TrimSpace(string(head)) {
		return "" // detached
	}
	return branch
}

// clip shortens s to n bytes for a summary line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

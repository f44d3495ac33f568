package work

import (
	"context"
	"errors"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/prompts"
)

// The prompt tools serve seed 004's registry (search → describe →
// execute, and reload) from the working tree of the store's repository:
// .agent/<agent>/registry.json and its templates, plus git codex's own
// built-in prompts. They change no state; their audit commit is their only
// write. See docs/PROMPTS.md.

// maxPromptResults bounds prompt_search's limit.
const maxPromptResults = 100

// PromptSearchIn is prompt_search's input.
type PromptSearchIn struct {
	Query string `json:"query" jsonschema:"what you want to do, in plain words"`
	Agent string `json:"agent,omitempty" jsonschema:"registry .agent/<agent>/ (default climpt)"`
	Limit int    `json:"limit,omitempty" jsonschema:"default 10"`
}

// PromptSearchResult is what prompt_search returns: the best matches,
// highest score first.
type PromptSearchResult struct {
	Agent    string            `json:"agent"`
	Results  []prompts.Result  `json:"results"`
	Warnings []prompts.Problem `json:"warnings,omitempty" jsonschema:"parts of the registry that could not be read and are left out (REGISTRY_LOAD_FAILED in prompt_reload)"`
}

// PromptSearch ranks the registry's commands against a request.
var PromptSearch = tools.Define("prompt_search", "prompt.search",
	"Search prompt commands (instructions for a job) by meaning, best first, score 0-1 (0.5+ good). Then prompt_describe and prompt_execute one.",
	tools.CLI{Path: "prompt search", Args: []string{"query"}},
	func(ctx context.Context, c *tools.Call, in PromptSearchIn) (PromptSearchResult, error) {
		agent, err := promptAgent(in.Agent)
		if err != nil {
			return PromptSearchResult{}, err
		}
		if !prompts.HasTerms(in.Query) {
			return PromptSearchResult{}, tools.Errorf(tools.InvalidInput, "query %q has no words to search for; describe the job, e.g. \"group changes and commit\"", in.Query).With("field", "query")
		}
		if in.Limit < 0 || in.Limit > maxPromptResults {
			return PromptSearchResult{}, tools.Errorf(tools.InvalidInput, "limit must be between 1 and %d (0 or none: %d)", maxPromptResults, prompts.DefaultLimit).With("field", "limit")
		}
		limit := in.Limit
		if limit == 0 {
			limit = prompts.DefaultLimit
		}
		cat := catalog(c, agent, false)
		res := cat.Search(in.Query, limit)
		c.Summarize("%s searched %s's prompts for %q (%d found)", c.Caller.ID, agent, clip(in.Query, 60), len(res))
		return PromptSearchResult{Agent: agent, Results: res, Warnings: cat.Problems}, nil
	}).Prepare(preparePrompts)

// PromptCommandIn names one command: its agent and C3L name.
type PromptCommandIn struct {
	Agent string `json:"agent,omitempty" jsonschema:"whose registry: .agent/<agent>/registry.json (default climpt)"`
	C1    string `json:"c1" jsonschema:"domain, e.g. git"`
	C2    string `json:"c2" jsonschema:"action, e.g. group-commit"`
	C3    string `json:"c3" jsonschema:"target, e.g. unstaged-changes"`
}

// PromptDescription is what prompt_describe returns: the command as its
// registry entry (or its template's front matter) describes it.
type PromptDescription struct {
	Agent       string            `json:"agent"`
	C1          string            `json:"c1"`
	C2          string            `json:"c2"`
	C3          string            `json:"c3"`
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description"`
	Usage       string            `json:"usage,omitempty"`
	Options     prompts.Options   `json:"options"`
	UV          []prompts.UserVar `json:"uv,omitempty" jsonschema:"custom variables: pass uv-<name> in prompt_execute's options"`
	Accepts     []string          `json:"accepts" jsonschema:"the option names prompt_execute takes for this command"`
	Source      string            `json:"source" jsonschema:"registry (registry.json only), template (a file in the working tree) or builtin (shipped with git codex)"`
	Templates   []string          `json:"templates,omitempty"`
	Config      string            `json:"config" jsonschema:"Climpt's configuration prefix for the command (seed 004's configParam): c1 for the default agent, <agent>-<c1> otherwise"`
	ConfigFiles []string          `json:"config_files,omitempty" jsonschema:"the prefix's files under .agent/climpt/config that apply: <prefix>-app.yml (where the templates are), <prefix>-user.yml (the actions and targets allowed)"`
	Warnings    []prompts.Problem `json:"warnings,omitempty"`
}

// PromptDescribe returns one command's full description.
var PromptDescribe = tools.Define("prompt_describe", "prompt.describe",
	"Describe one prompt command by its C3L name (c1 c2 c3, as prompt_search returns them): description, usage, options (edition, adaptation, file, stdin, destination), custom uv variables, and the option names prompt_execute accepts for it.",
	tools.CLI{Path: "prompt describe", Args: []string{"c1", "c2", "c3"}},
	func(ctx context.Context, c *tools.Call, in PromptCommandIn) (PromptDescription, error) {
		cat, cmd, err := promptCommand(c, in)
		if err != nil {
			return PromptDescription{}, err
		}
		c.Summarize("%s described %s", c.Caller.ID, cmd.Key())
		return PromptDescription{
			Agent: cat.Agent, C1: cmd.C1, C2: cmd.C2, C3: cmd.C3, Title: cmd.Title, Description: cmd.Description,
			Usage: cmd.Usage, Options: cmd.Options, UV: cmd.UV, Accepts: cmd.AcceptedOptions(), Source: cmd.Source,
			Templates: cmd.Templates, Config: cmd.Config(), ConfigFiles: cmd.ConfigFiles(), Warnings: cat.Problems,
		}, nil
	}).Prepare(preparePrompts)

// PromptExecuteIn is prompt_execute's input.
type PromptExecuteIn struct {
	Agent   string            `json:"agent,omitempty" jsonschema:"whose registry: .agent/<agent>/registry.json (default climpt)"`
	C1      string            `json:"c1" jsonschema:"domain, e.g. git"`
	C2      string            `json:"c2" jsonschema:"action, e.g. group-commit"`
	C3      string            `json:"c3" jsonschema:"target, e.g. unstaged-changes"`
	Options map[string]string `json:"options,omitempty" jsonschema:"edition, adaptation, input_text, input_text_file, destination_path and uv-<name>, as the command declares them (see prompt_describe's accepts)"`
	Task    string            `json:"task,omitempty" jsonschema:"a task id: fills {codex_task_id}, {codex_task_title} and {codex_task_description}"`
}

// PromptExecuted is what prompt_execute returns: the instruction text.
type PromptExecuted struct {
	Agent      string            `json:"agent"`
	C1         string            `json:"c1"`
	C2         string            `json:"c2"`
	C3         string            `json:"c3"`
	Edition    string            `json:"edition"`
	Adaptation string            `json:"adaptation,omitempty"`
	Template   string            `json:"template" jsonschema:"the template used: its path in the working tree, or builtin:<c1>/<c2>/<c3>/<file>"`
	Config     string            `json:"config" jsonschema:"Climpt's configuration prefix the command ran under (seed 004's configParam)"`
	Prompt     string            `json:"prompt" jsonschema:"the instructions: the template with its variables filled"`
	Warnings   []prompts.Problem `json:"warnings,omitempty"`
}

// PromptExecute renders a command's template.
var PromptExecute = tools.Define("prompt_execute", "prompt.execute",
	"Get a prompt command's instructions: its template (chosen by edition and adaptation as Climpt does) with {input_text}, {input_text_file}, {destination_path}, {uv-<name>} filled from options, and git codex's context ({codex_caller}, {codex_caller_type}, {codex_branch}, {codex_worktree}, and {codex_task_id}, {codex_task_title}, {codex_task_description} when task is given). Follow the instructions it returns.",
	tools.CLI{Path: "prompt execute", Args: []string{"c1", "c2", "c3"}},
	func(ctx context.Context, c *tools.Call, in PromptExecuteIn) (PromptExecuted, error) {
		cat, cmd, err := promptCommand(c, PromptCommandIn{Agent: in.Agent, C1: in.C1, C2: in.C2, C3: in.C3})
		if err != nil {
			return PromptExecuted{}, err
		}
		pp, _ := c.Prepared.(*promptPrep)
		branch := ""
		if pp != nil {
			branch = pp.branch
		} else {
			branch = headBranch(workDir(c))
		}
		vars := map[string]string{
			"codex_caller":      c.Caller.ID,
			"codex_caller_type": string(c.Caller.Type),
			"codex_worktree":    workDir(c),
			"codex_branch":      branch,
		}
		if c.Agent != nil {
			if c.Agent.Branch != "" {
				vars["codex_branch"] = c.Agent.Branch
			}
			if c.Agent.Worktree != "" {
				vars["codex_worktree"] = c.Agent.Worktree
			}
		}
		vars["codex_task_id"], vars["codex_task_title"], vars["codex_task_description"] = "", "", ""
		if in.Task != "" {
			t, err := getTask(c.Tx, in.Task)
			if err != nil {
				return PromptExecuted{}, err
			}
			vars["codex_task_id"], vars["codex_task_title"], vars["codex_task_description"] = t.ID, t.Title, t.Description
		}
		var r prompts.Rendered
		if pp != nil && pp.cmd == cmd { // the template was read before the transaction
			err = pp.tplErr
			if err == nil {
				r, err = cat.Render(cmd, pp.tpl, in.Options, vars)
			}
		} else {
			r, err = cat.Execute(cmd, in.Options, vars)
		}
		var oe *prompts.OptionError
		var ee *prompts.ExecError
		switch {
		case errors.As(err, &oe):
			return PromptExecuted{}, tools.Errorf(tools.InvalidInput, "%s; see `git codex prompt describe %s`", oe.Reason, cmd.Key()).
				With("field", "options").With("option", oe.Option).With("accepts", cmd.AcceptedOptions())
		case errors.As(err, &ee):
			return PromptExecuted{}, tools.Errorf(tools.ExecutionFailed, "%s %s could not be rendered: %s: %s", cat.Agent, cmd.Key(), ee.Path, ee.Cause).
				With("command", cmd.Key()).With("path", ee.Path).With("cause", ee.Cause)
		case err != nil:
			return PromptExecuted{}, err
		}
		c.Summarize("%s executed %s (%s)", c.Caller.ID, cmd.Key(), r.Template)
		return PromptExecuted{Agent: cat.Agent, C1: cmd.C1, C2: cmd.C2, C3: cmd.C3, Edition: r.Edition, Adaptation: r.Adaptation,
			Template: r.Template, Config: cmd.Config(), Prompt: r.Prompt, Warnings: cat.Problems}, nil
	}).Prepare(preparePrompts)

// PromptReloadIn is prompt_reload's input.
type PromptReloadIn struct {
	Agent string `json:"agent,omitempty" jsonschema:"whose registry: .agent/<agent>/registry.json (default climpt)"`
}

// PromptReloaded is what prompt_reload returns.
type PromptReloaded struct {
	Agent       string `json:"agent"`
	Count       int    `json:"count" jsonschema:"how many commands the registry serves now, built-ins included"`
	Version     string `json:"version,omitempty" jsonschema:"registry.json's version"`
	Description string `json:"description,omitempty"`
}

// PromptReload reads the registry again.
var PromptReload = tools.Define("prompt_reload", "prompt.reload",
	"Read the prompt registry again (registry.json and the templates) after changing it, and say how many commands it holds. Fails with REGISTRY_LOAD_FAILED (file, line, cause) when part of it cannot be read; the rest, and the built-ins, are still served.",
	tools.CLI{Path: "prompt reload"},
	func(ctx context.Context, c *tools.Call, in PromptReloadIn) (PromptReloaded, error) {
		agent, err := promptAgent(in.Agent)
		if err != nil {
			return PromptReloaded{}, err
		}
		cat := catalog(c, agent, true)
		if len(cat.Problems) > 0 {
			return PromptReloaded{}, loadFailed(cat, cat.Problems[0]).With("count", len(cat.Commands()))
		}
		c.Summarize("%s reloaded %s's prompts (%d commands)", c.Caller.ID, agent, len(cat.Commands()))
		return PromptReloaded{Agent: agent, Count: len(cat.Commands()), Version: cat.Version, Description: cat.Description}, nil
	}).Prepare(preparePrompts)

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

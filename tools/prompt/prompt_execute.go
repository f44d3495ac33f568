package prompt

import (
	"context"
	"errors"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/prompts"
)

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

// PromptExecute is the tool that renders a command's template, reading the
// task it names with tasks.
func PromptExecute(tasks TaskReader) *tools.Tool {
	return tools.Define("prompt_execute", "prompt.execute",
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
				t, err := tasks(c.Tx, in.Task)
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
}

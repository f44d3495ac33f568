package prompt

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/prompts"
)

// PromptCommandIn names one command: its agent and C3L name.
type PromptCommandIn struct {
	Agent string `json:"agent,omitempty" jsonschema:"whose registry: .agent/<agent>/registry.json (default climpt)"`
	C1    string `json:"c1" jsonschema:"domain, e.g. git"`
	C2    string `json:"c2" jsonschema:"action, e.g. group-commit"`
	C3    string `json:"c3" jsonschema:"target, e.g. unstaged-changes"`
}

// PromptDescription is what prompt_describe returns: the command as its
// registry entry (or its template's front matter) describes it (the
// prompts.Command itself, embedded, so a field added there shows here),
// and what is worked out from it.
type PromptDescription struct {
	Agent string `json:"agent"`
	prompts.Command
	Accepts     []string          `json:"accepts" jsonschema:"the option names prompt_execute takes for this command"`
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
			Agent: cat.Agent, Command: *cmd, Accepts: cmd.AcceptedOptions(),
			Config: cmd.Config(), ConfigFiles: cmd.ConfigFiles(), Warnings: cat.Problems,
		}, nil
	}).Prepare(preparePrompts)

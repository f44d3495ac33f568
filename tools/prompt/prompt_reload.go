package prompt

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
)

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

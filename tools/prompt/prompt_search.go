package prompt

import (
	"context"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/prompts"
)

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

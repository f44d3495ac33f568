package app

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gitcodex/git-codex/tools/prompt"
	"github.com/gitcodex/git-codex/tools/prompts"
)

// renderPrompt prints the prompt tools' results for a person; it reports
// false for data that is not theirs.
func (e *env) renderPrompt(data any) (bool, error) {
	w := e.stdout
	switch d := data.(type) {
	case prompt.PromptSearchResult:
		e.promptWarnings(d.Warnings)
		if len(d.Results) == 0 {
			fmt.Fprintln(e.stderr, "no matching commands")
			return true, nil
		}
		tp := e.table("C1", "C2", "C3", "SCORE", "DESCRIPTION")
		for _, r := range d.Results {
			tp.AddField(r.C1)
			tp.AddField(r.C2)
			tp.AddField(r.C3)
			tp.AddField(strconv.FormatFloat(r.Score, 'f', 2, 64))
			tp.AddField(oneLine(r.Description))
			tp.EndRow()
		}
		return true, tp.Render()
	case prompt.PromptDescription:
		e.promptWarnings(d.Warnings)
		fmt.Fprintf(w, "command:     %s %s %s (%s, agent %s)\n", d.C1, d.C2, d.C3, d.Source, d.Agent)
		for _, kv := range [][2]string{{"title", d.Title}, {"description", d.Description}, {"usage", d.Usage},
			{"editions", strings.Join(d.Options.Edition, ", ")}, {"adaptations", strings.Join(d.Options.Adaptation, ", ")},
			{"templates", strings.Join(d.Templates, ", ")}} {
			if kv[1] != "" {
				fmt.Fprintf(w, "%-12s %s\n", kv[0]+":", oneLine(kv[1]))
			}
		}
		fmt.Fprintf(w, "%-12s %s\n", "options:", strings.Join(d.Accepts, ", "))
		for _, v := range d.UV {
			fmt.Fprintf(w, "  uv-%s: %s\n", v.Name, oneLine(v.Description))
		}
		return true, nil
	case prompt.PromptExecuted:
		e.promptWarnings(d.Warnings)
		fmt.Fprint(w, d.Prompt)
		if !strings.HasSuffix(d.Prompt, "\n") {
			fmt.Fprintln(w)
		}
		return true, nil
	case prompt.PromptReloaded:
		fmt.Fprintf(w, "%s: %d commands\n", d.Agent, d.Count)
		return true, nil
	}
	return false, nil
}

// promptWarnings tells a person on stderr which parts of the registry
// were left out.
func (e *env) promptWarnings(ps []prompts.Problem) {
	for _, p := range ps {
		fmt.Fprintf(e.stderr, "warning: %s (left out)\n", p)
	}
}

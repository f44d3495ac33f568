package instance_test

import (
	"regexp"
	"testing"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/gitcodex/git-codex/tools/instance"
)

// TestPromptsNameOnlyPermittedTools: the first prompt of every type of
// instance git codex spawns (the registry's `codex work task`, and the
// one built in Go) names only tools the type may call by the default
// policy, and names how its work is handed over. A task worker
// (task.spawn_worker) was told to ask for a review with request_review,
// which workers may not call.
func TestPromptsNameOnlyPermittedTools(t *testing.T) {
	reg := builtin.Registry()
	cfg := tools.NewConfig(reg.ConfigKeys(), nil, nil)
	word := regexp.MustCompile(`[a-z][a-z_]+[a-z]`)
	handsOver := map[tools.AgentType]string{tools.TypeCoding: "request_review", tools.TypeWorker: "create_pull_request", tools.TypeReview: "send_feedback", tools.TypePlanning: "create_issues"}
	for _, typ := range []tools.AgentType{tools.TypePlanning, tools.TypeCoding, tools.TypeReview, tools.TypeWorker, tools.TypeSupervisor, tools.TypeOrchestrator} {
		a := tools.Agent{ID: "a-1", Type: typ, Worktree: "/tmp/wt/a-1", Branch: "codex/a-1", Prompt: "Add a users table\nthe migration"}
		for name, prompt := range map[string]string{"registry": instance.FirstPrompt(t.TempDir(), a), "built in": instance.WorkPrompt(a)} {
			named := map[string]bool{}
			for _, w := range word.FindAllString(prompt, -1) {
				tool, ok := reg.Lookup(w)
				if !ok || named[w] {
					continue
				}
				named[w] = true
				if !tools.Allows(cfg, typ, tool.Permission) {
					t.Errorf("%s's %s prompt names %s, which a %s may not call (%s):\n%s", typ, name, w, typ, tool.Permission, prompt)
				}
			}
			if want := handsOver[typ]; want != "" && !named[want] {
				t.Errorf("%s's %s prompt does not say to hand the work over with %s:\n%s", typ, name, want, prompt)
			}
		}
	}
}

package tools

import (
	"regexp"
	"testing"
)

// TestPromptsNameOnlyPermittedTools: the first prompt of every type of
// instance git codex spawns (the registry's `codex work task`, and the
// one built in Go) names only tools the type may call by the default
// policy, and names how its work is handed over. A task worker
// (task.spawn_worker) was told to ask for a review with request_review,
// which workers may not call.
func TestPromptsNameOnlyPermittedTools(t *testing.T) {
	reg := Builtin()
	cfg := &Config{keys: reg.ConfigKeys()}
	word := regexp.MustCompile(`[a-z][a-z_]+[a-z]`)
	handsOver := map[AgentType]string{TypeCoding: "request_review", TypeWorker: "create_pull_request", TypeReview: "send_feedback", TypePlanning: "create_issues"}
	for _, typ := range []AgentType{TypePlanning, TypeCoding, TypeReview, TypeWorker, TypeSupervisor, TypeOrchestrator} {
		a := Agent{ID: "a-1", Type: typ, Worktree: "/tmp/wt/a-1", Branch: "codex/a-1", Prompt: "Add a users table\nthe migration"}
		for name, prompt := range map[string]string{"registry": firstPrompt(t.TempDir(), a), "built in": workPrompt(a)} {
			named := map[string]bool{}
			for _, w := range word.FindAllString(prompt, -1) {
				tool, ok := reg.Lookup(w)
				if !ok || named[w] {
					continue
				}
				named[w] = true
				if !permitted(cfg, typ, tool.Permission) {
					t.Errorf("%s's %s prompt names %s, which a %s may not call (%s):\n%s", typ, name, w, typ, tool.Permission, prompt)
				}
			}
			if want := handsOver[typ]; want != "" && !named[want] {
				t.Errorf("%s's %s prompt does not say to hand the work over with %s:\n%s", typ, name, want, prompt)
			}
		}
	}
}

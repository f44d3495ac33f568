// Package work holds the git codex nouns not yet in packages of their
// own, built on the framework (package tools) and the nouns peeled
// before them (tools/mail, tools/decision, tools/prompt, tools/lock,
// tools/cycle, tools/instance, tools/delegate, tools/review, tools/forge):
// the tools that ask for GitHub calls (they read tasks and epics; forge
// makes the calls), the GitHub review delivery, and tasks, comments and
// epics; their tools, record kinds and config
// keys, listed in Catalog for the assembly (tools/builtin). Each tool is
// in a file named after it (task_claim.go), what a noun's tools share in
// one named after what it holds (task.go, agentwork.go, reviewqueue.go),
// so a tool peeled into its noun's package moves whole. They are to
// become packages of their own, lowest first (docs/DEVELOPING.md, "The
// map of tools").
package work

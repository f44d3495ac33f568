// Package work holds git codex's nouns on the framework (package tools):
// mail, decisions, prompts, locks, cycles, instances, delegation, reviews,
// the GitHub calls, and tasks, comments and epics; their tools, their
// record kinds and their config keys, listed in Catalog for the assembly
// (tools/builtin). Its nouns are to become packages of their own, lowest
// first (docs/DEVELOPING.md, "The map of tools").
package work

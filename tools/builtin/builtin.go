// Package builtin assembles git codex: the framework (package tools) and
// the nouns built on it, handed to the framework as one Catalog. It is the
// only package that knows every noun; the adapters (the CLI, the MCP
// server, the web page) get their registry here.
package builtin

import (
	"slices"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/cycle"
	"github.com/gitcodex/git-codex/tools/decision"
	"github.com/gitcodex/git-codex/tools/delegate"
	"github.com/gitcodex/git-codex/tools/instance"
	"github.com/gitcodex/git-codex/tools/lock"
	"github.com/gitcodex/git-codex/tools/mail"
	"github.com/gitcodex/git-codex/tools/prompt"
	"github.com/gitcodex/git-codex/tools/review"
	"github.com/gitcodex/git-codex/tools/work"
)

// Registry returns a registry of everything git codex ships.
func Registry() *tools.Registry { return tools.NewRegistry(Catalog()) }

// Catalog is every tool git codex ships (the framework's config tools and
// the nouns'), the pipeline's hooks, and the record kinds and config keys
// the nouns define. A fresh value on every call.
func Catalog() tools.Catalog {
	cat := tools.Join(mail.Catalog(), decision.Catalog(), prompt.Catalog(work.PromptTask), lock.Catalog(cycle.AcquireLock), cycle.Catalog(), instance.Catalog(), delegate.Catalog(), review.Catalog(), work.Catalog())
	cat.Tools = slices.Concat(tools.ConfigTools(), cat.Tools)
	return cat
}

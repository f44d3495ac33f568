package work

import (
	"slices"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/decision"
	"github.com/gitcodex/git-codex/tools/delegate"
	"github.com/gitcodex/git-codex/tools/instance"
	"github.com/gitcodex/git-codex/tools/mail"
	"github.com/gitcodex/git-codex/tools/review"
)

// BuiltinCatalog is what tools/builtin assembles (which this package's
// own tests cannot import): the catalogs of this package and of the nouns
// below it, and the framework's config tools.
func BuiltinCatalog() tools.Catalog {
	cat := tools.Join(mail.Catalog(), decision.Catalog(), instance.Catalog(), delegate.Catalog(), review.Catalog(), Catalog())
	cat.Tools = slices.Concat(tools.ConfigTools(), cat.Tools)
	return cat
}

// Builtin is a registry of BuiltinCatalog.
func Builtin() *tools.Registry { return tools.NewRegistry(BuiltinCatalog()) }

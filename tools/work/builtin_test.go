package work

import (
	"slices"

	"github.com/gitcodex/git-codex/tools"
)

// BuiltinCatalog is what tools/builtin assembles (which this package's
// own tests cannot import): this package's catalog and the framework's
// config tools.
func BuiltinCatalog() tools.Catalog {
	cat := Catalog()
	cat.Tools = slices.Concat(tools.ConfigTools(), cat.Tools)
	return cat
}

// Builtin is a registry of BuiltinCatalog.
func Builtin() *tools.Registry { return tools.NewRegistry(BuiltinCatalog()) }

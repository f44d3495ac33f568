package tools

import "sync"

// Catalog is what the assembly (tools/builtin) hands the framework: the tools,
// the pipeline's hooks, and the record kinds and config keys the nouns
// define. The framework keeps no list of the nouns' things: it learns
// them from this value, given to NewRegistry, so nothing registers into a
// global and a test can assemble a registry of its own. The framework
// adds its own kinds (config, agents) and keys (auth, policy, timeout,
// retry).
type Catalog struct {
	Tools []*Tool
	Hooks Hooks
	// Kinds are the nouns' record kinds, in the order docs/STATE.md
	// lists them.
	Kinds []Kind
	// ConfigKeys are the settings the nouns own.
	ConfigKeys []ConfigKey
	// KeyPatterns find the settings whose names the nouns make up (a
	// launcher's agent.<name>.command): each answers whether name is one.
	KeyPatterns []func(name string) (ConfigKey, bool)
}

// NewRegistry returns a registry of the catalog's tools, hooks, kinds and
// config keys. It panics on a duplicate tool name.
func NewRegistry(cat Catalog) *Registry {
	r := &Registry{tools: map[string]*Tool{}, internal: internalTools(), hooks: cat.Hooks,
		kinds: append(KindTable{configKind(), agentKind()}, cat.Kinds...),
		// built on first use: a CLI run that reads no setting skips it
		keys: sync.OnceValue(func() *ConfigKeys { return newConfigKeys(cat.ConfigKeys, cat.KeyPatterns) }),
	}
	for _, t := range cat.Tools {
		r.Register(t)
	}
	return r
}

// Kinds is every record kind the registry's state holds: the framework's
// and the nouns'.
func (r *Registry) Kinds() KindTable { return append(KindTable(nil), r.kinds...) }

// ConfigKeys is the table of every setting the registry's tools read.
func (r *Registry) ConfigKeys() *ConfigKeys { return r.keys() }

// Join is the catalogs of several packages as one, for the assembly: their
// tools, kinds, config keys and key patterns in order, and their hooks
// (the pipeline runs each package's BeforeHandler, OnFailure, AgentEnded
// and Reapers steps in order, and asks each UnknownTool step in order; SettleClaims belongs
// to one package, and Join panics if two set it).
func Join(cats ...Catalog) Catalog {
	var out Catalog
	for _, c := range cats {
		out.Tools = append(out.Tools, c.Tools...)
		out.Kinds = append(out.Kinds, c.Kinds...)
		out.ConfigKeys = append(out.ConfigKeys, c.ConfigKeys...)
		out.KeyPatterns = append(out.KeyPatterns, c.KeyPatterns...)
		out.Hooks.BeforeHandler = append(out.Hooks.BeforeHandler, c.Hooks.BeforeHandler...)
		out.Hooks.OnFailure = append(out.Hooks.OnFailure, c.Hooks.OnFailure...)
		out.Hooks.AgentEnded = append(out.Hooks.AgentEnded, c.Hooks.AgentEnded...)
		out.Hooks.Reapers = append(out.Hooks.Reapers, c.Hooks.Reapers...)
		out.Hooks.UnknownTool = append(out.Hooks.UnknownTool, c.Hooks.UnknownTool...)
		if c.Hooks.SettleClaims != nil {
			if out.Hooks.SettleClaims != nil {
				panic("tools: two catalogs set Hooks.SettleClaims")
			}
			out.Hooks.SettleClaims = c.Hooks.SettleClaims
		}
	}
	return out
}

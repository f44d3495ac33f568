package gitstate

import (
	"strconv"
	"strings"
)

// repoConfig is what the store takes from git's configuration of the
// repository: how durable git makes what it writes, and whether git's own
// automatic maintenance may run.
type repoConfig struct {
	fsync fsyncPolicy
	// autoMaintenance is false when the user turned git's automatic
	// housekeeping off (gc.auto=0 or maintenance.auto=false): the store
	// then starts no repack or maintenance of its own either.
	autoMaintenance bool
	// ownMaintenance is set when the user chose git maintenance's
	// tasks (maintenance.strategy, or maintenance.<task>.enabled): the
	// store's periodic `git maintenance run --auto` runs those, as git
	// would; otherwise it runs git's default task (gc) and the
	// commit-graph task (see Store.maintain).
	ownMaintenance bool
	// precious is extensions.preciousObjects: git refuses to delete
	// packs or objects, so a repack that would delete some is not started.
	precious bool
	// shared is core.sharedRepository: the modes of what git codex
	// creates in the git directory.
	shared sharedPerm
	// readsOnState is codex.reads=state: this machine commits reads and
	// refusals on RefState, as every call was before issue 27, rather
	// than on its reads ref (ReadsPrefix; codex.reads=local, the default).
	readsOnState bool
	// firstSyncDays is codex.firstSyncDays: how many days of the state's
	// history the first sync of a repository without state fetches
	// (shallow.go), a decimal number; 0 fetches it whole.
	// DefaultFirstSyncDays when unset or not a number.
	firstSyncDays float64
}

// fsyncPolicy says which of the files a transaction writes are fsynced
// before the ref that names their objects moves, as git's core.fsync says
// for its own: components "pack" (the .pack) and "pack-metadata" (its
// .idx), both in git's default, and "reference" (the ref), not in it.
type fsyncPolicy struct {
	pack, packMetadata, reference bool
}

// fsync components, as git 2.39 numbers them (cache.h).
const (
	fsyncLooseObject = 1 << iota
	fsyncPack
	fsyncPackMetadata
	fsyncCommitGraph
	fsyncIndex
	fsyncReference

	fsyncDefault = fsyncPack | fsyncPackMetadata | fsyncCommitGraph
	fsyncAll     = fsyncLooseObject | fsyncPack | fsyncPackMetadata | fsyncCommitGraph | fsyncIndex | fsyncReference
)

// fsyncNames are git's component names and aggregates, in git's order.
var fsyncNames = []struct {
	name string
	bits int
}{
	{"loose-object", fsyncLooseObject},
	{"pack", fsyncPack},
	{"pack-metadata", fsyncPackMetadata},
	{"commit-graph", fsyncCommitGraph},
	{"index", fsyncIndex},
	{"objects", fsyncLooseObject | fsyncPack},
	{"reference", fsyncReference},
	{"derived-metadata", fsyncPackMetadata | fsyncCommitGraph},
	{"committed", fsyncLooseObject | fsyncPack | fsyncReference},
	{"added", fsyncLooseObject | fsyncPack | fsyncReference | fsyncIndex},
	{"all", fsyncAll},
}

// parseFsync reads a core.fsync value as git 2.39 does
// (parse_fsync_components): start from the default, "none" clears,
// "-name" removes, a name adds every component whose name starts with it
// (git compares with strncmp), unknown names are ignored.
func parseFsync(v string) int {
	current, positive, negative := fsyncDefault, 0, 0
	for _, part := range strings.Split(v, ",") {
		part = strings.Trim(part, " \t\n\r")
		if part == "none" {
			current = 0
			continue
		}
		negated := strings.HasPrefix(part, "-")
		part = strings.TrimPrefix(part, "-")
		if part == "" {
			continue
		}
		for _, n := range fsyncNames {
			if !strings.HasPrefix(n.name, part) {
				continue
			}
			if negated {
				negative |= n.bits
			} else {
				positive |= n.bits
			}
		}
	}
	return current&^negative | positive
}

// loadConfig reads the store's settings from git's configuration as git
// sees it from this repository (every level: see GitConfig). A
// configuration that cannot be read leaves git's defaults.
func (s *Store) loadConfig() repoConfig {
	cfg := repoConfig{fsync: policyOf(fsyncDefault), autoMaintenance: true, firstSyncDays: DefaultFirstSyncDays}
	entries, err := s.GitConfig()
	if err != nil {
		return cfg
	}
	if v, ok := ConfigValue(entries, "core", "", "fsync"); ok {
		cfg.fsync = policyOf(parseFsync(v))
	}
	if v, ok := ConfigValue(entries, "gc", "", "auto"); ok && strings.TrimSpace(v) == "0" {
		cfg.autoMaintenance = false
	}
	if v, ok := ConfigValue(entries, "maintenance", "", "auto"); ok && !configBool(v) {
		cfg.autoMaintenance = false
	}
	for _, e := range entries {
		if strings.EqualFold(e.Section, "maintenance") && (strings.EqualFold(e.Key, "strategy") && !e.HasSubsection || strings.EqualFold(e.Key, "enabled") && e.HasSubsection) {
			cfg.ownMaintenance = true
		}
	}
	if v, ok := ConfigValue(entries, "extensions", "", "preciousobjects"); ok && configBool(v) {
		cfg.precious = true
	}
	if v, ok := ConfigValue(entries, "core", "", "sharedrepository"); ok {
		cfg.shared, _ = parseSharedRepository(v)
	}
	if v, ok := ConfigValue(entries, "codex", "", "firstsyncdays"); ok {
		if n, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && n >= 0 && n < 1e6 {
			cfg.firstSyncDays = n
		}
	}
	if v, ok := ConfigValue(entries, "codex", "", "reads"); ok && strings.EqualFold(strings.TrimSpace(v), "state") {
		cfg.readsOnState = true
	}
	return cfg
}

// policyOf is the policy of a set of core.fsync components.
func policyOf(bits int) fsyncPolicy {
	return fsyncPolicy{pack: bits&fsyncPack != 0, packMetadata: bits&fsyncPackMetadata != 0, reference: bits&fsyncReference != 0}
}

// configBool reads a git boolean; anything git would not call false is
// true.
func configBool(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "no", "off", "0", "":
		return false
	}
	return true
}

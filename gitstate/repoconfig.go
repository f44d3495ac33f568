package gitstate

import (
	"os"
	"os/exec"
	"path/filepath"
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
	// precious is extensions.preciousObjects: git refuses to delete
	// packs or objects, so a repack that would delete some is not started.
	precious bool
}

// fsyncPolicy says which of the files a transaction writes are fsynced
// before the ref that names their objects moves: git's core.fsync
// components "pack" (the .pack) and "pack-metadata" (its .idx).
type fsyncPolicy struct {
	pack, packMetadata bool
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

// configKeys are the variables loadConfig reads, lower-cased as git names
// them.
var configKeys = []string{"core.fsync", "gc.auto", "maintenance.auto", "extensions.preciousobjects"}

// loadConfig reads the store's settings from git's configuration as git
// sees it from this repository.
func loadConfig(commonDir string) repoConfig {
	vals, ok := readConfigFiles(commonDir, os.Getenv, configKeys)
	if !ok {
		vals = gitConfigValues(commonDir, configKeys)
	}
	cfg := repoConfig{fsync: fsyncPolicy{pack: true, packMetadata: true}, autoMaintenance: true}
	if v, ok := vals["core.fsync"]; ok {
		bits := parseFsync(v)
		cfg.fsync = fsyncPolicy{pack: bits&fsyncPack != 0, packMetadata: bits&fsyncPackMetadata != 0}
	}
	if v, ok := vals["gc.auto"]; ok && strings.TrimSpace(v) == "0" {
		cfg.autoMaintenance = false
	}
	if v, ok := vals["maintenance.auto"]; ok && !configBool(v) {
		cfg.autoMaintenance = false
	}
	if v, ok := vals["extensions.preciousobjects"]; ok && configBool(v) {
		cfg.precious = true
	}
	return cfg
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

// readConfigFiles returns the last value of each of keys in git's config
// files, lowest precedence first: system, global (XDG, then
// ~/.gitconfig), the repository's. ok is false when git's answer might
// differ (include or includeIf sections, per-worktree config, -c or
// GIT_CONFIG_* overrides); the caller then asks git. Starting git costs
// milliseconds a process; reading the files, microseconds.
func readConfigFiles(commonDir string, getenv func(string) string, keys []string) (vals map[string]string, ok bool) {
	if getenv("GIT_CONFIG_PARAMETERS") != "" || getenv("GIT_CONFIG_COUNT") != "" || getenv("GIT_CONFIG") != "" {
		return nil, false
	}
	var files []string
	if getenv("GIT_CONFIG_NOSYSTEM") == "" {
		sys := getenv("GIT_CONFIG_SYSTEM")
		if sys == "" {
			sys = "/etc/gitconfig"
		}
		files = append(files, sys)
	}
	if global := getenv("GIT_CONFIG_GLOBAL"); global != "" {
		files = append(files, global)
	} else {
		home := getenv("HOME")
		xdg := getenv("XDG_CONFIG_HOME")
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		if xdg != "" {
			files = append(files, filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			files = append(files, filepath.Join(home, ".gitconfig"))
		}
	}
	files = append(files, filepath.Join(commonDir, "config"))
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	vals = map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if os.IsNotExist(err) || (err == nil && len(b) == 0) {
			continue
		}
		if err != nil {
			return nil, false
		}
		entries, err := ParseConfig(b)
		if err != nil {
			return nil, false
		}
		for _, e := range entries {
			switch {
			case e.Section == "include" || e.Section == "includeif":
				return nil, false
			case e.Section == "extensions" && !e.HasSubsection && e.Key == "worktreeconfig":
				return nil, false
			case !e.HasSubsection && want[e.Section+"."+e.Key]:
				v := e.Value
				if e.Bare {
					v = "true"
				}
				vals[e.Section+"."+e.Key] = v
			}
		}
	}
	return vals, true
}

// gitConfigValues asks git for keys (the last value of each that is set).
func gitConfigValues(commonDir string, keys []string) map[string]string {
	vals := map[string]string{}
	for _, k := range keys {
		out, err := exec.Command("git", "--git-dir", commonDir, "config", "--get", k).Output()
		if err == nil {
			vals[k] = strings.TrimSuffix(string(out), "\n")
		}
	}
	return vals
}

package tools

import (
	"sort"
	"strings"
)

// ConfigValue is one setting as config_get shows it.
type ConfigValue struct {
	Key     string `json:"key"`
	Value   any    `json:"value" jsonschema:"the value: a number, or a list of globs"`
	Default bool   `json:"default"` // true when nobody has set it
	Doc     string `json:"doc"`
	SetBy   string `json:"set_by,omitempty"`
	// Local: a setting of this machine, read from git config (GitKey)
	// only, never from the shared state.
	Local  bool   `json:"local,omitempty" jsonschema:"a setting of this machine: read from git config (git_key) only, set by people only"`
	GitKey string `json:"git_key,omitempty" jsonschema:"the git config variable of a local setting"`
	// Ignored is a value of this local setting in the shared state,
	// which is never read.
	Ignored *IgnoredSetting `json:"ignored,omitempty" jsonschema:"a value of this local setting found in the shared state (a peer's sync, an older git codex), never read"`
}

// ConfigTools are the framework's own tools, which read and change the
// settings: the assembly lists them with the nouns'.
func ConfigTools() []*Tool {
	return []*Tool{ConfigGet, ConfigList, ConfigSet, ConfigUnset, ConfigReset}
}

// allKeys is every setting config_get and config_list show: the fixed
// ones and the launchers git config or the shared config name, by key.
func (c *Config) allKeys() []ConfigKey {
	keys := append(c.keys.all(), c.patternKeysIn()...)
	sort.SliceStable(keys, func(i, j int) bool { return keys[i].Name < keys[j].Name })
	return keys
}

// show is one key as config_get and config_list return it. A local key
// shows git config's value, and a value the shared state holds of it as
// ignored.
func (c *Config) show(k ConfigKey) ConfigValue {
	e, set := c.Entry(k.Name)
	if !k.Local {
		return ConfigValue{Key: k.Name, Value: c.Value(k), Default: !set, Doc: k.Doc, SetBy: e.SetBy}
	}
	_, valid := c.LocalValue(k)
	v := ConfigValue{Key: k.Name, Value: c.Value(k), Default: !valid, Doc: k.Doc, Local: true, GitKey: GitConfigName(k.Name)}
	if set {
		v.Ignored = &IgnoredSetting{Key: k.Name, GitKey: v.GitKey, SetBy: e.SetBy, SetAt: e.SetAt}
	}
	return v
}

func unknownKey(keys *ConfigKeys, key string) *Error {
	return Errorf(InvalidInput, "unknown config key %q; known keys: %s", key, strings.Join(keys.names(), ", ")).With("key", key)
}

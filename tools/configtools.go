package tools

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
)

// ConfigGetIn is config_get's input.
type ConfigGetIn struct {
	Key string `json:"key,omitempty" jsonschema:"one setting's key; empty for all settings"`
}

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

// ConfigValues is what config_get returns, sorted by key.
type ConfigValues struct {
	Settings []ConfigValue `json:"settings"`
}

// ConfigGet shows settings, including the permission policy.
var ConfigGet = Define("config_get", "config.get",
	"Show the settings in force (all, or one key), including the permission policy globs per agent type.",
	CLI{Path: "config get", Args: []string{"key"}},
	func(ctx context.Context, c *Call, in ConfigGetIn) (ConfigValues, error) {
		out := ConfigValues{Settings: []ConfigValue{}}
		keys := c.Config.allKeys()
		if k, ok := c.Config.keys.Lookup(in.Key); ok && in.Key != "" {
			keys = []ConfigKey{k} // also a launcher's key, agent.<name>.command
		}
		for _, k := range keys {
			if in.Key != "" && k.Name != in.Key {
				continue
			}
			out.Settings = append(out.Settings, c.Config.show(k))
		}
		if in.Key != "" && len(out.Settings) == 0 {
			return ConfigValues{}, unknownKey(c.Config.keys, in.Key)
		}
		c.Summarize("%s read config %s", c.Caller.ID, in.Key)
		return out, nil
	}).Hint(Hints{ReadOnly: true, Idempotent: true})

// ConfigListIn is config_list's input: nothing.
type ConfigListIn struct{}

// ConfigList shows every setting: config_get without a key, under the name
// people look for.
var ConfigList = Define("config_list", "config.get",
	"List every setting: its key, the value in force, and whether it is the default or who set it.",
	CLI{Path: "config list"},
	func(ctx context.Context, c *Call, in ConfigListIn) (ConfigValues, error) {
		out := ConfigValues{Settings: []ConfigValue{}}
		for _, k := range c.Config.allKeys() {
			out.Settings = append(out.Settings, c.Config.show(k))
		}
		c.Summarize("%s listed the config", c.Caller.ID)
		return out, nil
	}).Hint(Hints{ReadOnly: true, Idempotent: true})

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

// ConfigSetIn is config_set's input.
type ConfigSetIn struct {
	Key   string `json:"key" jsonschema:"the setting's key, e.g. policy.worker.allow"`
	Value string `json:"value" jsonschema:"new value: a number, or for lists a JSON array or comma-separated globs"`
}

// ConfigSet changes one setting.
var ConfigSet = Define("config_set", permSetConfig,
	"Change one setting, e.g. the permission globs of an agent type (policy.<type>.allow / .deny) or mail size limits. "+
		"Settings of this machine (launchers, agent.default, github.api_url, worktree.dir, tmux.socket) go to its git config, not the shared state, and only people may set them.",
	CLI{Path: "config set", Args: []string{"key", "value"}},
	func(ctx context.Context, c *Call, in ConfigSetIn) (*ConfigValue, error) {
		k, ok := c.Config.keys.Lookup(in.Key)
		if !ok {
			return nil, unknownKey(c.Config.keys, in.Key)
		}
		if k.Local {
			if err := refuseLocal(c, k); err != nil {
				return nil, err
			}
		}
		v, err := parseConfigValue(k, in.Value)
		if err != nil {
			return nil, err
		}
		if k.Local {
			return setLocal(c, k, in.Value, v)
		}
		c.Config.Entries[k.Name] = ConfigEntry{Value: v, SetBy: c.Caller.ID, SetAt: c.Tx.Now(), Clock: c.Tx.Clock()}
		if why := lockedOut(c.Config); why != "" {
			return nil, Errorf(InvalidInput, "setting %s to %s is refused: %s; keep config.set allowed for people", k.Name, Truncate(string(v), 80), why).
				With("key", k.Name).With("reason", "lockout")
		}
		if err := c.Tx.Put(PathConfig, c.Config); err != nil {
			return nil, err
		}
		c.Target(k.Name)
		c.Summarize("%s set %s = %s", c.Caller.ID, k.Name, Truncate(string(v), 80))
		return &ConfigValue{Key: k.Name, Value: v, Doc: k.Doc, SetBy: c.Caller.ID}, nil
	}).Hint(Hints{Idempotent: true})

// ConfigResetIn is config_reset's input.
type ConfigResetIn struct {
	What string `json:"what" jsonschema:"policy (every policy key) or one setting's key"`
}

// ConfigReset sets settings back to their defaults. People may always call
// it, whatever the policy says (see permitted): it is the way back from a
// policy that shuts everyone out, set here or arrived by sync.
var ConfigReset = Define("config_reset", permResetConfig,
	"Set settings back to their defaults: `policy` (every policy key) or one key. People may always reset, even when the policy denies them everything; the reset is recorded like any call.",
	CLI{Path: "config reset", Args: []string{"what"}},
	func(ctx context.Context, c *Call, in ConfigResetIn) (*ConfigValues, error) {
		var keys []ConfigKey
		for _, k := range c.Config.keys.all() {
			if k.Name == in.What || (in.What == "policy" && strings.HasPrefix(k.Name, "policy.")) {
				keys = append(keys, k)
			}
		}
		if k, ok := c.Config.keys.pattern(in.What); ok {
			keys = []ConfigKey{k}
		}
		if len(keys) == 1 && keys[0].Local {
			// this machine's setting: back to its default in git config
			if err := refuseLocal(c, keys[0]); err != nil {
				return nil, err
			}
			out := &ConfigValues{Settings: make([]ConfigValue, 1)}
			v, err := unsetLocal(c, keys[0])
			if err != nil {
				return nil, err
			}
			c.After(func(context.Context, *Followup) error { out.Settings[0] = *v; return nil })
			return out, nil
		}
		if len(keys) == 0 {
			return nil, Errorf(InvalidInput, "nothing to reset called %q; give `policy` or one of: %s", in.What, strings.Join(c.Config.keys.names(), ", ")).With("what", in.What)
		}
		out := &ConfigValues{Settings: []ConfigValue{}}
		for _, k := range keys {
			// The default is written with this call's clock rather than
			// the key removed, so the reset outranks the older value a
			// peer still holds when the two are merged.
			v, _ := json.Marshal(k.Default)
			c.Config.Entries[k.Name] = ConfigEntry{Value: v, SetBy: c.Caller.ID, SetAt: c.Tx.Now(), Clock: c.Tx.Clock()}
			out.Settings = append(out.Settings, ConfigValue{Key: k.Name, Value: json.RawMessage(v), Default: true, Doc: k.Doc, SetBy: c.Caller.ID})
		}
		if why := lockedOut(c.Config); why != "" {
			return nil, Errorf(InvalidInput, "resetting %s is refused: %s; reset `policy`", in.What, why).With("what", in.What).With("reason", "lockout")
		}
		if err := c.Tx.Put(PathConfig, c.Config); err != nil {
			return nil, err
		}
		c.Target(in.What)
		c.Summarize("%s reset %s to the defaults", c.Caller.ID, in.What)
		return out, nil
	}).Hint(Hints{Idempotent: true})

// ConfigUnsetIn is config_unset's input.
type ConfigUnsetIn struct {
	Key string `json:"key" jsonschema:"the setting's key, e.g. policy.worker.allow"`
}

// ConfigUnset puts one setting back to its default. The entry stays in
// the record with a null value and a new clock, so that a sync with a
// machine that still has the old value keeps the newer choice.
var ConfigUnset = Define("config_unset", "config.set",
	"Put one setting back to its default value (e.g. after a config_set you want to undo).",
	CLI{Path: "config unset", Args: []string{"key"}},
	func(ctx context.Context, c *Call, in ConfigUnsetIn) (*ConfigValue, error) {
		k, ok := c.Config.keys.Lookup(in.Key)
		if !ok {
			return nil, unknownKey(c.Config.keys, in.Key)
		}
		if k.Local {
			if err := refuseLocal(c, k); err != nil {
				return nil, err
			}
			return unsetLocal(c, k)
		}
		c.Target(k.Name)
		if _, set := c.Config.Entry(k.Name); !set {
			c.Summarize("%s unset %s, already the default", c.Caller.ID, k.Name)
			v := c.Config.show(k)
			return &v, nil
		}
		c.Config.Entries[k.Name] = ConfigEntry{Value: json.RawMessage("null"), SetBy: c.Caller.ID, SetAt: c.Tx.Now(), Clock: c.Tx.Clock()}
		if err := c.Tx.Put(PathConfig, c.Config); err != nil {
			return nil, err
		}
		c.Summarize("%s unset %s (default again)", c.Caller.ID, k.Name)
		v := c.Config.show(k)
		return &v, nil
	}).Hint(Hints{Idempotent: true})

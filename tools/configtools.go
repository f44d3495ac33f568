package tools

import (
	"context"
	"encoding/json"
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
		keys := configKeys()
		if k, ok := lookupKey(in.Key); ok && in.Key != "" {
			keys = []configKey{k} // also a launcher's key, agent.<name>.command
		}
		for _, k := range keys {
			if in.Key != "" && k.Name != in.Key {
				continue
			}
			out.Settings = append(out.Settings, c.Config.show(k))
		}
		if in.Key != "" && len(out.Settings) == 0 {
			return ConfigValues{}, unknownKey(in.Key)
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
		for _, k := range configKeys() {
			out.Settings = append(out.Settings, c.Config.show(k))
		}
		c.Summarize("%s listed the config", c.Caller.ID)
		return out, nil
	}).Hint(Hints{ReadOnly: true, Idempotent: true})

// show is one key as config_get and config_list return it.
func (cfg *Config) show(k configKey) ConfigValue {
	e, set := cfg.set(k.Name)
	return ConfigValue{Key: k.Name, Value: cfg.value(k), Default: !set, Doc: k.Doc, SetBy: e.SetBy}
}

func unknownKey(key string) *Error {
	return Errorf(InvalidInput, "unknown config key %q; known keys: %s", key, strings.Join(keyNames(), ", ")).With("key", key)
}

// ConfigSetIn is config_set's input.
type ConfigSetIn struct {
	Key   string `json:"key" jsonschema:"the setting's key, e.g. policy.worker.allow"`
	Value string `json:"value" jsonschema:"new value: a number, or for lists a JSON array or comma-separated globs"`
}

// ConfigSet changes one setting.
var ConfigSet = Define("config_set", permSetConfig,
	"Change one setting, e.g. the permission globs of an agent type (policy.<type>.allow / .deny) or mail size limits.",
	CLI{Path: "config set", Args: []string{"key", "value"}},
	func(ctx context.Context, c *Call, in ConfigSetIn) (ConfigValue, error) {
		k, ok := lookupKey(in.Key)
		if !ok {
			return ConfigValue{}, unknownKey(in.Key)
		}
		v, err := parseConfigValue(k, in.Value)
		if err != nil {
			return ConfigValue{}, err
		}
		c.Config.Entries[k.Name] = ConfigEntry{Value: v, SetBy: c.Caller.ID, SetAt: c.Tx.Now(), Clock: c.Tx.Clock()}
		if why := lockedOut(c.Config); why != "" {
			return ConfigValue{}, Errorf(InvalidInput, "setting %s to %s is refused: %s; keep config.set allowed for people", k.Name, truncate(string(v), 80), why).
				With("key", k.Name).With("reason", "lockout")
		}
		if err := c.Tx.Put(pathConfig, c.Config); err != nil {
			return ConfigValue{}, err
		}
		c.Target(k.Name)
		c.Summarize("%s set %s = %s", c.Caller.ID, k.Name, truncate(string(v), 80))
		return ConfigValue{Key: k.Name, Value: v, Doc: k.Doc, SetBy: c.Caller.ID}, nil
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
	func(ctx context.Context, c *Call, in ConfigResetIn) (ConfigValues, error) {
		var keys []configKey
		for _, k := range configKeys() {
			if k.Name == in.What || (in.What == "policy" && strings.HasPrefix(k.Name, "policy.")) {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			return ConfigValues{}, Errorf(InvalidInput, "nothing to reset called %q; give `policy` or one of: %s", in.What, strings.Join(keyNames(), ", ")).With("what", in.What)
		}
		out := ConfigValues{Settings: []ConfigValue{}}
		for _, k := range keys {
			// The default is written with this call's clock rather than
			// the key removed, so the reset outranks the older value a
			// peer still holds when the two are merged.
			v, _ := json.Marshal(k.Default)
			c.Config.Entries[k.Name] = ConfigEntry{Value: v, SetBy: c.Caller.ID, SetAt: c.Tx.Now(), Clock: c.Tx.Clock()}
			out.Settings = append(out.Settings, ConfigValue{Key: k.Name, Value: json.RawMessage(v), Default: true, Doc: k.Doc, SetBy: c.Caller.ID})
		}
		if why := lockedOut(c.Config); why != "" {
			return ConfigValues{}, Errorf(InvalidInput, "resetting %s is refused: %s; reset `policy`", in.What, why).With("what", in.What).With("reason", "lockout")
		}
		if err := c.Tx.Put(pathConfig, c.Config); err != nil {
			return ConfigValues{}, err
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
	func(ctx context.Context, c *Call, in ConfigUnsetIn) (ConfigValue, error) {
		k, ok := lookupKey(in.Key)
		if !ok {
			return ConfigValue{}, unknownKey(in.Key)
		}
		c.Target(k.Name)
		if _, set := c.Config.set(k.Name); !set {
			c.Summarize("%s unset %s, already the default", c.Caller.ID, k.Name)
			return c.Config.show(k), nil
		}
		c.Config.Entries[k.Name] = ConfigEntry{Value: json.RawMessage("null"), SetBy: c.Caller.ID, SetAt: c.Tx.Now(), Clock: c.Tx.Clock()}
		if err := c.Tx.Put(pathConfig, c.Config); err != nil {
			return ConfigValue{}, err
		}
		c.Summarize("%s unset %s (default again)", c.Caller.ID, k.Name)
		return c.Config.show(k), nil
	}).Hint(Hints{Idempotent: true})

package tools

import (
	"context"
)

// ConfigGetIn is config_get's input.
type ConfigGetIn struct {
	Key string `json:"key,omitempty" jsonschema:"one setting's key; empty for all settings"`
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

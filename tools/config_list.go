package tools

import (
	"context"
)

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

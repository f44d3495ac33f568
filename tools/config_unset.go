package tools

import (
	"context"
	"encoding/json"
)

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

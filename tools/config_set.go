package tools

import (
	"context"
)

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

package tools

import (
	"context"
	"encoding/json"
	"strings"
)

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

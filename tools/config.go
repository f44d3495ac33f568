package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
)

const PathConfig = "config/config.json"

// configKind: config/config.json, the one settings record.
func configKind() Kind {
	return RecordKind(Kind{Name: "config", Dir: "config", Depth: 1, Kept: true}, func(_ []string, name string, _ *Config) error {
		if name != "config" {
			return fmt.Errorf("the only config record is %s", PathConfig)
		}
		return nil
	})
}

// Config is the state's settings: one record, config/config.json, holding
// only the keys someone set. Each entry carries its own clock so that sync
// can merge two sides key by key. Unset keys read as their defaults.
type Config struct {
	Entries map[string]ConfigEntry `json:"entries"`
	// local is this machine's settings (git config), where local keys
	// are read from; never stored (see localconfig.go).
	local *localSettings
	// keys is the table of settings the config is read against: each
	// key's kind and default.
	keys *ConfigKeys
}

// ConfigEntry is one set key. An entry whose value is JSON null was unset
// (config_unset): the key reads as its default again. It stays in the
// record, with its clock, so that sync's key-by-key merge lets the newer of
// an unset and a set on two machines win, as between two sets.
type ConfigEntry struct {
	Value json.RawMessage `json:"value"`
	SetBy string          `json:"set_by"`
	SetAt time.Time       `json:"set_at"`
	Clock gitstate.Clock  `json:"clock"`
}

// ConfigKey describes a setting: its name, the kind of value, its default
// and what it is for.
type ConfigKey struct {
	Name    string `json:"key"`
	Kind    string `json:"kind"` // "list" (of strings), "int", "string" or "json" (checked by Check)
	Default any    `json:"default"`
	Doc     string `json:"doc"`
	// OneOf, if set, lists the values a string key accepts.
	OneOf []string `json:"-"`
	// Check validates a "json" key's value; its error is CONFIG_INVALID.
	Check func(json.RawMessage) error
	// CheckString validates a "string" key's value; its error is
	// INVALID_INPUT.
	CheckString func(string) error `json:"-"`
	// Local marks a setting of this machine: read from git config
	// (gitConfigName) only, never from the shared state, and set by
	// people only (localconfig.go).
	Local bool `json:"local,omitempty"`
}

// ConfigKeys is the table of settings: the framework's own (auth, policy,
// timeout, retry) and those the nouns register through the assembly's
// Catalog, as they register tools. A registry builds it once: a call reads
// several settings, and building the list (the default workflow and policy
// included) each time cost a CLI write ~0.4 ms. Its defaults are never
// modified: values are read through their JSON (Config.value).
type ConfigKeys struct {
	keys     []ConfigKey // sorted by name
	patterns []func(name string) (ConfigKey, bool)
}

// newConfigKeys builds the table from the nouns' keys and key patterns.
func newConfigKeys(nouns []ConfigKey, patterns []func(name string) (ConfigKey, bool)) *ConfigKeys {
	keys := slices.Concat(authKeys(), policyKeys(), timeoutKeys(), retryKeys(), nouns)
	sort.Slice(keys, func(i, j int) bool { return keys[i].Name < keys[j].Name })
	return &ConfigKeys{keys: keys, patterns: patterns}
}

// all lists every setting, sorted by name.
func (t *ConfigKeys) all() []ConfigKey { return slices.Clone(t.keys) }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Lookup finds a setting by name: a listed one, a tool's timeout, or one
// whose name a noun makes up.
func (t *ConfigKeys) Lookup(name string) (ConfigKey, bool) {
	for _, k := range t.keys {
		if k.Name == name {
			return k, true
		}
	}
	if k, ok := timeoutKey(name); ok {
		return k, true
	}
	return t.pattern(name)
}

// pattern finds a setting whose name a noun makes up (a launcher's
// agent.<name>.command), through the patterns the nouns register
// (the Catalog).
func (t *ConfigKeys) pattern(name string) (ConfigKey, bool) {
	for _, pattern := range t.patterns {
		if k, ok := pattern(name); ok {
			return k, true
		}
	}
	return ConfigKey{}, false
}

// ConfigAt reads the config at the tip, outside any transaction (for work
// done after a call's commit).
func ConfigAt(ctx context.Context, st *gitstate.Store, keys *ConfigKeys) (*Config, error) {
	var cfg *Config
	err := st.View(ctx, func(sn *gitstate.Snapshot) error {
		var err error
		cfg, err = LoadConfig(sn, keys)
		return err
	})
	return cfg, err
}

func (t *ConfigKeys) names() []string {
	var names []string
	for _, k := range t.keys {
		names = append(names, k.Name)
	}
	return names
}

// recordGetter reads records: a transaction or a snapshot.
type recordGetter interface {
	Get(path string, v any) error
}

// NewConfig is a config of the given entries (nil: nothing set) and this
// machine's git config (local; nil: none), read against keys: for reading
// settings that are not in a state.
func NewConfig(keys *ConfigKeys, entries map[string]ConfigEntry, local func() ([]gitstate.ConfigEntry, error)) *Config {
	if entries == nil {
		entries = map[string]ConfigEntry{}
	}
	if local == nil {
		local = func() ([]gitstate.ConfigEntry, error) { return nil, nil }
	}
	return &Config{Entries: entries, keys: keys, local: &localSettings{read: local}}
}

// Keys is the table of settings the config is read against.
func (c *Config) Keys() *ConfigKeys { return c.keys }

// LoadConfig reads the config record (a state without one has defaults),
// and this machine's settings from git config when the first local key is
// read.
func LoadConfig(src configSource, keys *ConfigKeys) (*Config, error) {
	c := Config{local: &localSettings{read: src.GitConfig}, keys: keys}
	err := src.Get(PathConfig, &c)
	if err != nil && !errors.Is(err, gitstate.ErrNotFound) {
		return nil, err
	}
	if c.Entries == nil {
		c.Entries = map[string]ConfigEntry{}
	}
	return &c, nil
}

// Value returns a key's effective value as compact JSON (the record on
// disk is indented, and the value is shown on one line). A local key's
// is git config's, whatever the shared record says.
func (c *Config) Value(k ConfigKey) json.RawMessage {
	if k.Local {
		if v, ok := c.LocalValue(k); ok {
			return v
		}
	} else if e, ok := c.Entry(k.Name); ok {
		var b bytes.Buffer
		if json.Compact(&b, e.Value) != nil {
			return e.Value
		}
		return b.Bytes()
	}
	b, _ := json.Marshal(k.Default)
	return b
}

// Entry returns the entry of a key someone set (and did not unset since).
func (c *Config) Entry(name string) (ConfigEntry, bool) {
	e, ok := c.Entries[name]
	if !ok || len(e.Value) == 0 || string(bytes.TrimSpace(e.Value)) == "null" {
		return ConfigEntry{}, false
	}
	return e, true
}

func (c *Config) IntValue(name string) int {
	k, _ := c.keys.Lookup(name)
	var n int
	if err := json.Unmarshal(c.Value(k), &n); err != nil {
		n, _ = k.Default.(int)
	}
	return n
}

func (c *Config) ListValue(name string) []string {
	k, _ := c.keys.Lookup(name)
	var l []string
	if err := json.Unmarshal(c.Value(k), &l); err != nil {
		l, _ = k.Default.([]string)
		l = slices.Clone(l)
	}
	return l
}

func (c *Config) StringValue(name string) string {
	k, ok := c.keys.Lookup(name)
	if !ok {
		return ""
	}
	var v string
	if err := json.Unmarshal(c.Value(k), &v); err != nil || (k.OneOf != nil && !slices.Contains(k.OneOf, v)) {
		v, _ = k.Default.(string)
	}
	return v
}

// rule returns the permission rule for an agent type.
func (c *Config) rule(t AgentType) rule {
	return rule{
		allow: c.ListValue("policy." + string(t) + ".allow"),
		deny:  c.ListValue("policy." + string(t) + ".deny"),
	}
}

// parseConfigValue turns what a person typed into the key's JSON value:
// lists accept a JSON array or comma-separated globs, ints a number.
func parseConfigValue(k ConfigKey, raw string) (json.RawMessage, error) {
	raw = strings.TrimSpace(raw)
	switch k.Kind {
	case "string":
		if len(k.OneOf) > 0 && !slices.Contains(k.OneOf, raw) {
			return nil, Errorf(InvalidInput, "%s takes one of %s, not %q", k.Name, strings.Join(k.OneOf, ", "), raw).With("key", k.Name)
		}
		if k.CheckString != nil && raw != "" {
			if err := k.CheckString(raw); err != nil {
				return nil, Errorf(InvalidInput, "%s: %v", k.Name, err).With("key", k.Name)
			}
		}
		b, _ := json.Marshal(raw)
		return b, nil
	case "int":
		n, err := strconv.Atoi(raw)
		if err != nil || n <= 0 {
			return nil, Errorf(InvalidInput, "%s takes a positive integer, not %q", k.Name, raw).With("key", k.Name)
		}
		return json.RawMessage(strconv.Itoa(n)), nil
	case "json":
		var b bytes.Buffer
		if err := json.Compact(&b, []byte(raw)); err != nil {
			return nil, Errorf(ConfigInvalid, "%s takes JSON: %v", k.Name, err).With("key", k.Name)
		}
		if err := k.Check(b.Bytes()); err != nil {
			return nil, Errorf(ConfigInvalid, "%s: %v", k.Name, err).With("key", k.Name)
		}
		return b.Bytes(), nil
	case "list":
		var l []string
		if strings.HasPrefix(raw, "[") {
			if err := json.Unmarshal([]byte(raw), &l); err != nil {
				return nil, Errorf(InvalidInput, "%s takes a JSON array of strings or comma-separated globs: %v", k.Name, err).With("key", k.Name)
			}
		} else if raw != "" {
			for _, g := range strings.Split(raw, ",") {
				l = append(l, strings.TrimSpace(g))
			}
		}
		l = nonNil(l)
		for _, g := range l {
			if err := checkGlob(g); err != nil {
				return nil, Errorf(InvalidInput, "bad glob %q in %s: %v", g, k.Name, err).With("key", k.Name)
			}
		}
		b, _ := json.Marshal(l)
		return b, nil
	}
	return nil, fmt.Errorf("config key %s has unknown kind %s", k.Name, k.Kind)
}

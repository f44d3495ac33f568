package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
)

// Settings of this machine (issue 29). The state's config travels with
// every push and fetch, so anything in it is chosen by whoever can push
// the state, or by any agent the policy lets call config_set. A setting
// that runs a program (a launcher's command line, the launcher spawn
// picks), names a host that receives credentials (github.api_url) or
// points at files and sockets (worktree.dir, tmux.socket) is therefore
// local, as git keeps core.sshCommand, hooks and credential helpers: it is
// read from git config (codex.<key>, see gitConfigName) and nowhere else,
// set by a person (`git config`, or `git codex config set` run by a
// person, which writes git config), and a value of it in the state, from
// a peer's sync, an older git codex or a hand-made commit, is never read.
// `config get`, `config list`, `status` and `sync` say when the state holds
// one (IgnoredSetting).

// configSource is what the config is read from: the state's records (a
// transaction or a snapshot), and this machine's git config.
type configSource interface {
	recordGetter
	GitConfig() ([]gitstate.ConfigEntry, error)
}

// localSettings reads this machine's settings from git config once per
// call, when the first local key is read: most calls read none, and
// reading git config may start git.
type localSettings struct {
	read    func() ([]gitstate.ConfigEntry, error)
	once    sync.Once
	entries []gitstate.ConfigEntry
	err     error
}

func (l *localSettings) load() ([]gitstate.ConfigEntry, error) {
	if l == nil || l.read == nil {
		return nil, nil
	}
	l.once.Do(func() { l.entries, l.err = l.read() })
	return l.entries, l.err
}

// GitConfigName is where a local key lives in git config: codex.<key>,
// its last word in camelCase, since git's variable names take letters,
// digits and '-' only: agent.claude.command is codex.agent.claude.command,
// github.api_url is codex.github.apiUrl.
func GitConfigName(key string) string {
	i := strings.LastIndex(key, ".")
	words := strings.Split(key[i+1:], "_")
	for j := 1; j < len(words); j++ {
		if words[j] != "" {
			words[j] = strings.ToUpper(words[j][:1]) + words[j][1:]
		}
	}
	return "codex." + key[:i+1] + strings.Join(words, "")
}

// LocalRaw is a local key's value as git config holds it (the last one
// set, git's precedence), ok false when it is not set. An error reading
// git config reads as not set; launcher and the GitHub settings report it
// (localErr).
func (c *Config) LocalRaw(k ConfigKey) (string, bool) {
	entries, err := c.local.load()
	if err != nil {
		return "", false
	}
	name := GitConfigName(k.Name)
	dot := strings.LastIndex(name, ".")
	sub := strings.TrimPrefix(name[:dot], "codex.")
	v, ok := gitstate.ConfigValue(entries, "codex", sub, name[dot+1:])
	return strings.TrimSpace(v), ok
}

// HasLocal reports whether git config sets a local key.
func (c *Config) HasLocal(k ConfigKey) bool {
	_, ok := c.LocalRaw(k)
	return ok
}

// LocalErr is why this machine's git config could not be read, if it
// could not.
func (c *Config) LocalErr() error {
	_, err := c.local.load()
	return err
}

// LocalValue is a local key's value as JSON, ok false when git config
// does not set it or sets it to something the key does not take.
func (c *Config) LocalValue(k ConfigKey) (json.RawMessage, bool) {
	raw, ok := c.LocalRaw(k)
	if !ok {
		return nil, false
	}
	v, err := parseConfigValue(k, raw)
	if err != nil {
		return nil, false
	}
	return v, true
}

// IgnoredSetting is a value of a local setting found in the state's
// shared config: a peer's sync, an older git codex or a hand-made commit
// put it there. It is never read; the setting's value is this machine's
// git config (git_key).
type IgnoredSetting struct {
	Key    string    `json:"key"`
	GitKey string    `json:"git_key" jsonschema:"the git config variable that holds this machine's value"`
	SetBy  string    `json:"set_by" jsonschema:"who the shared record says set it"`
	SetAt  time.Time `json:"set_at"`
	Clock  uint64    `json:"-"`
}

// Ignored lists the local settings the shared config holds a value of,
// sorted by key.
func (c *Config) Ignored() []IgnoredSetting {
	var out []IgnoredSetting
	for name := range c.Entries {
		k, ok := c.keys.Lookup(name)
		if !ok || !k.Local {
			continue
		}
		if e, set := c.Entry(name); set {
			out = append(out, IgnoredSetting{Key: name, GitKey: GitConfigName(name), SetBy: e.SetBy, SetAt: e.SetAt, Clock: uint64(e.Clock)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// IgnoredSettings lists the values of local settings that the state in sn
// holds and that git codex never reads (see IgnoredSetting).
func (r *Registry) IgnoredSettings(sn *gitstate.Snapshot) ([]IgnoredSetting, error) {
	cfg, err := LoadConfig(sn, r.keys())
	if err != nil {
		return nil, err
	}
	return cfg.Ignored(), nil
}

// patternKeysIn are the keys whose names nouns make up (a launcher's
// agent.<name>.command, .prompt: patternKey) that git config or the
// shared config mention, for config_list.
func (c *Config) patternKeysIn() []ConfigKey {
	seen := map[string]bool{}
	var out []ConfigKey
	add := func(name string) {
		if k, ok := c.keys.pattern(name); ok && !seen[name] {
			seen[name] = true
			out = append(out, k)
		}
	}
	for name := range c.Entries {
		add(name)
	}
	entries, _ := c.local.load()
	for _, e := range entries {
		if e.Section == "codex" && e.Subsection != "" {
			add(e.Subsection + "." + e.Key)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// refuseLocal refuses a change of a local setting by anyone but a
// person: an agent may not choose what this machine runs or where its
// credentials go.
func refuseLocal(c *Call, k ConfigKey) error {
	if c.Caller.Type == TypeHuman {
		return nil
	}
	return Errorf(PermissionDenied, "%s is a setting of this machine (it runs a program, receives credentials or names a path), kept in git config and never in the shared state; only a person sets it, with `git config %s <value>`",
		k.Name, GitConfigName(k.Name)).With("key", k.Name).With("git_key", GitConfigName(k.Name)).With("reason", "local")
}

// clearShared nulls the shared config's value of a local key, if it holds
// one (it is never read; nulled with this call's clock, so the next sync
// takes the null to the peers too). It reports whether it changed the
// record.
func clearShared(c *Call, k ConfigKey) bool {
	if _, set := c.Config.Entry(k.Name); !set {
		return false
	}
	c.Config.Entries[k.Name] = ConfigEntry{Value: json.RawMessage("null"), SetBy: c.Caller.ID, SetAt: c.Tx.Now(), Clock: c.Tx.Clock()}
	return true
}

// setLocal is config_set of a local key by a person: the value goes to
// git config after the call's commit (outside the writer lock), and the
// audit record names the key but not the value, which stays on the
// machine. A shared value of the key is nulled.
func setLocal(c *Call, k ConfigKey, raw string, v json.RawMessage) (*ConfigValue, error) {
	name := GitConfigName(k.Name)
	args, _ := json.Marshal(map[string]string{"key": k.Name, "value": "[local: in git config " + name + ", not recorded]"})
	c.auditArgs = string(args)
	if clearShared(c, k) {
		if err := c.Tx.Put(PathConfig, c.Config); err != nil {
			return nil, err
		}
	}
	raw = strings.TrimSpace(raw)
	out := &ConfigValue{Key: k.Name, Value: v, Doc: k.Doc, Local: true, GitKey: name}
	c.Target(k.Name)
	c.Summarize("%s set %s on this machine (git config %s)", c.Caller.ID, k.Name, name)
	c.After(func(ctx context.Context, f *Followup) error {
		if err := f.Store.SetGitConfig(ctx, name, raw); err != nil {
			return f.Record(ctx, func(*Call) error {
				return Errorf(InternalError, "could not write git config %s: %v", name, err).With("key", k.Name).With("git_key", name)
			})
		}
		return nil
	})
	return out, nil
}

// unsetLocal is config_unset (and config_reset) of a local key by a
// person: git config's value goes after the call's commit, and a shared
// value of the key is nulled. out is filled in once git config is
// written: a value set in another of git's files (--global) still holds.
func unsetLocal(c *Call, k ConfigKey) (*ConfigValue, error) {
	name := GitConfigName(k.Name)
	if clearShared(c, k) {
		if err := c.Tx.Put(PathConfig, c.Config); err != nil {
			return nil, err
		}
	}
	out := &ConfigValue{}
	c.Target(k.Name)
	c.Summarize("%s unset %s on this machine (git config %s)", c.Caller.ID, k.Name, name)
	c.After(func(ctx context.Context, f *Followup) error {
		if err := f.Store.UnsetGitConfig(ctx, name); err != nil {
			return f.Record(ctx, func(*Call) error {
				return Errorf(InternalError, "could not unset git config %s: %v", name, err).With("key", k.Name).With("git_key", name)
			})
		}
		cfg, err := f.Config(ctx)
		if err != nil {
			return err
		}
		*out = cfg.show(k)
		return nil
	})
	return out, nil
}

// CheckAPIURL accepts a GitHub REST endpoint that the GitHub token may be
// sent to: an https URL, or plain http to this machine only (a local
// stand-in). Anything else would send the token in the clear.
func CheckAPIURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("%q is not an http(s) URL with a host", s)
	}
	if u.User != nil {
		return fmt.Errorf("%q carries a user name or password; give the endpoint alone (the token comes from GH_TOKEN or gh)", u.Redacted())
	}
	if u.Scheme == "http" && !loopbackHost(u.Hostname()) {
		return fmt.Errorf("%q is plain http to another machine, which would send the GitHub token in the clear; use https (plain http is for a stand-in on this machine: 127.0.0.1, ::1, localhost)", s)
	}
	return nil
}

// loopbackHost reports whether host names this machine.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

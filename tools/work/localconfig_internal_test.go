package work

import (
	"encoding/json"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/forge"
	"github.com/gitcodex/git-codex/tools/instance"
)

// TestGitConfigName: local keys live under codex. in git config, the last
// word in camelCase (git's variable names take no '_').
func TestGitConfigName(t *testing.T) {
	for key, want := range map[string]string{
		"agent.claude.command": "codex.agent.claude.command",
		"agent.My_Bot.prompt":  "codex.agent.My_Bot.prompt",
		"agent.default":        "codex.agent.default",
		"github.api_url":       "codex.github.apiUrl",
		"worktree.dir":         "codex.worktree.dir",
		"tmux.socket":          "codex.tmux.socket",
	} {
		if got := tools.GitConfigName(key); got != want {
			t.Errorf("gitConfigName(%s) = %s, want %s", key, got, want)
		}
	}
}

// TestSharedLocalKeysNeverRead: the launchers, the default launcher, the
// GitHub endpoint and the paths are read from git config only; the shared
// config's values of them (a peer's) are never used, and an unset launcher
// (a null entry, as config_unset wrote before) is its default, not an
// empty command.
func TestSharedLocalKeysNeverRead(t *testing.T) {
	shared := map[string]tools.ConfigEntry{
		"agent.evil.command":    {Value: json.RawMessage(`"touch /tmp/pwned"`), SetBy: "human:m@x"},
		"agent.claude.command":  {Value: json.RawMessage(`null`)},
		"agent.codex.command":   {Value: json.RawMessage(`"touch /tmp/pwned"`)},
		"agent.default":         {Value: json.RawMessage(`"evil"`)},
		"github.api_url":        {Value: json.RawMessage(`"http://attacker.example.com/"`)},
		"worktree.dir":          {Value: json.RawMessage(`"/tmp/x"`)},
		"tmux.socket":           {Value: json.RawMessage(`"/tmp/x.sock"`)},
		"review.max_iterations": {Value: json.RawMessage(`7`)},
	}
	keys := Builtin().ConfigKeys()
	c := tools.NewConfig(keys, shared, nil)
	if l, err := instance.LauncherFor(c, "evil"); err == nil {
		t.Errorf("the shared agent.evil.command is used: %q", l.Command)
	}
	for _, name := range []string{"", "claude", "codex"} {
		l, err := instance.LauncherFor(c, name)
		if err != nil || l.Command != instance.BuiltinLaunchers()[l.Name].Command || (name == "" && l.Name != "claude") {
			t.Errorf("launcher(%q) = %+v, %v; want the built-in default", name, l, err)
		}
	}
	if s := forge.Settings(c, "."); s.APIURL != "" {
		t.Errorf("the token would go to the shared %s", s.APIURL)
	}
	for _, k := range []string{"worktree.dir", "tmux.socket"} {
		if v := c.StringValue(k); v != "" {
			t.Errorf("%s = %q from the shared config", k, v)
		}
	}
	if n := c.IntValue("review.max_iterations"); n != 7 {
		t.Errorf("a shared key reads %d", n)
	}
	if got := len(c.Ignored()); got != 6 {
		t.Errorf("ignored %d shared values, want 6: %+v", got, c.Ignored())
	}

	// this machine's git config is read
	c = tools.NewConfig(keys, shared, func() ([]gitstate.ConfigEntry, error) {
		// as git config reads "[codex "agent.evil"] command = my-evil --flag ..."
		codex := func(sub, key, value string) gitstate.ConfigEntry {
			return gitstate.ConfigEntry{Section: "codex", Subsection: sub, HasSubsection: true, Key: key, Value: value}
		}
		return []gitstate.ConfigEntry{codex("agent.evil", "command", "my-evil --flag"), codex("agent.evil", "prompt", "file"),
			codex("agent", "default", "evil"), codex("github", "apiurl", "https://ghe.example.com/api/v3/"),
			codex("worktree", "dir", "../wt"), codex("agent.claude", "command", "")}, nil
	})
	l, err := instance.LauncherFor(c, "")
	if err != nil || l.Name != "evil" || l.Command != "my-evil --flag" || l.Prompt != "file" {
		t.Errorf("launcher from git config: %+v, %v", l, err)
	}
	if l, _ := instance.LauncherFor(c, "claude"); l.Command != "claude" {
		t.Errorf("an empty command in git config is the default, got %q", l.Command)
	}
	if s := forge.Settings(c, "."); s.APIURL != "https://ghe.example.com/api/v3/" {
		t.Errorf("api url %q", s.APIURL)
	}
	if v := c.StringValue("worktree.dir"); v != "../wt" {
		t.Errorf("worktree.dir %q", v)
	}
}

// TestCheckAPIURL: the GitHub token is sent over https, or plain http to
// this machine only.
func TestCheckAPIURL(t *testing.T) {
	for u, ok := range map[string]bool{
		"https://api.github.com/":        true,
		"https://ghe.example.com/api/v3": true,
		"http://127.0.0.1:8080/":         true,
		"http://127.1.2.3/":              true,
		"http://[::1]:9/":                true,
		"http://localhost:1/api/":        true,
		"http://ghe.example.com/api/v3/": false,
		"http://10.0.0.1/":               false,
		"http://localhost.evil.com/":     false,
		"ftp://ghe.example.com/":         false,
		"https://":                       false,
		"ghe.example.com":                false,
		"https://u:p@ghe.example.com/":   false,
		"http://127.0.0.1.nip.io/":       false,
	} {
		if err := tools.CheckAPIURL(u); (err == nil) != ok {
			t.Errorf("CheckAPIURL(%q) = %v, want ok %v", u, err, ok)
		}
	}
}

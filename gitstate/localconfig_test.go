package gitstate_test

import (
	"context"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestStoreGitConfig: the store reads git's configuration the same way
// whether it reads the files itself or asks git (an include sends it to
// git), and writes and removes variables of the repository's own file.
func TestStoreGitConfig(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	for name, value := range map[string]string{
		"codex.agent.My_Bot.command": "my-bot --flag 'a b' # not a comment",
		"codex.github.apiUrl":        "https://ghe.example.com/api/v3/",
		"codex.agent.x.prompt":       "multi\nline",
	} {
		if err := st.SetGitConfig(ctx, name, value); err != nil {
			t.Fatal(err)
		}
	}
	get := func() map[string]string {
		entries, err := st.GitConfig()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, sub := range []string{"agent.My_Bot", "github", "agent.x"} {
			for _, key := range []string{"command", "apiurl", "prompt"} {
				if v, ok := gitstate.ConfigValue(entries, "codex", sub, key); ok {
					out[sub+"."+key] = v
				}
			}
		}
		return out
	}
	want := map[string]string{
		"agent.My_Bot.command": "my-bot --flag 'a b' # not a comment",
		"github.apiurl":        "https://ghe.example.com/api/v3/",
		"agent.x.prompt":       "multi\nline",
	}
	check := func(how string) {
		t.Helper()
		got := get()
		if len(got) != len(want) {
			t.Fatalf("%s: %v, want %v", how, got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q", how, k, got[k], v)
			}
		}
	}
	check("read from the files")
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "codex.tmux.socket")
	t.Setenv("GIT_CONFIG_VALUE_0", "/s")
	check("asked git")
	if err := st.UnsetGitConfig(ctx, "codex.agent.x.prompt"); err != nil {
		t.Fatal(err)
	}
	if err := st.UnsetGitConfig(ctx, "codex.agent.x.prompt"); err != nil {
		t.Fatalf("unset of an unset name: %v", err)
	}
	delete(want, "agent.x.prompt")
	check("after unset")
}

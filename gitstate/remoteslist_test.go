package gitstate_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// Remotes lists what `git remote` lists, read from the config files without
// a git process: every remote.<name>.* name of every level (a remote with
// only a fetch refspec, or an unknown key, included; a name starting with
// "/" and remote.pushDefault not), sorted as git sorts them, each once; the
// legacy $GIT_DIR/remotes files are not listed (nor by git). With an
// include in the config, git is asked, and the answer is the same.
func TestRemotesAsGitRemote(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[remote \"global\"]\n\turl = /g\n[remote \"origin\"]\n\tpushurl = /p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := gitstatetest.NewRepo(t)
	s, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, kv := range [][2]string{
		{"remote.origin.url", "/x"}, {"remote.Foo.bar.url", "/y"}, {"remote.onlyfetch.fetch", "+refs/heads/*:refs/remotes/onlyfetch/*"},
		{"remote.pushDefault", "origin"}, {"remote./abs.url", "/z"}, {"remote.weird.bogus", "1"}, {"remote.a.url", "/w"},
	} {
		gitstatetest.Git(t, dir, "config", kv[0], kv[1])
	}
	gitDir := filepath.Join(dir, ".git")
	if err := os.MkdirAll(filepath.Join(gitDir, "remotes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gitDir, "remotes", "legacy"), []byte("URL: /q\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(what string) {
		t.Helper()
		got, err := s.Remotes(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want := withoutWarnings(gitstatetest.Git(t, dir, "remote"))
		if strings.Join(got, "\n") != want {
			t.Errorf("%s: Remotes = %q, want what git remote lists:\n%s", what, got, want)
		}
	}
	check("from the files")
	if _, ok := gitstate.ReadConfigFiles(gitDir, os.Getenv); !ok {
		t.Fatal("the config files were not read: the test did not test them")
	}
	inc := filepath.Join(t.TempDir(), "inc")
	if err := os.WriteFile(inc, []byte("[remote \"included\"]\n\turl = /i\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitstatetest.Git(t, dir, "config", "include.path", inc)
	check("with an include")
}

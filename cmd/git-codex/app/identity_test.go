package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadUserEmailAgreesWithGit compares the direct read of user.email with
// `git config user.email` over the cases git's precedence decides, and
// checks that what the fast path cannot be sure of goes to git.
func TestReadUserEmailAgreesWithGit(t *testing.T) {
	tests := []struct {
		name                   string
		system, xdg, home, loc string
		env                    map[string]string
		wantFallback           bool
	}{
		{name: "home only", home: "[user]\n\temail = home@x\n"},
		{name: "local wins", home: "[user]\n\temail = home@x\n", loc: "[user]\n\temail = local@x\n"},
		{name: "home over xdg", xdg: "[user]\n\temail = xdg@x\n", home: "[user]\n\temail = home@x\n"},
		{name: "xdg only", xdg: "[User]\n\tEmail = xdg@x\n"},
		{name: "system lowest", system: "[user]\n\temail = sys@x\n", home: "[core]\n\tbare = false\n"},
		{name: "last value in a file", home: "[user]\n\temail = a@x\n[user]\n\temail = b@x\n"},
		{name: "quoted", home: "[user]\n\temail = \"q@x\" ; comment\n"},
		{name: "none"},
		{name: "include", home: "[include]\n\tpath = other\n[user]\n\temail = h@x\n", wantFallback: true},
		{name: "includeIf", home: "[includeIf \"gitdir:/\"]\n\tpath = other\n", wantFallback: true},
		{name: "-c", home: "[user]\n\temail = h@x\n", env: map[string]string{"GIT_CONFIG_PARAMETERS": "'user.email'='c@x'"}, wantFallback: true},
		{name: "worktree config", loc: "[extensions]\n\tworktreeConfig = true\n", wantFallback: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			home, xdg := filepath.Join(root, "home"), filepath.Join(root, "xdg")
			repo := filepath.Join(root, "repo")
			system := filepath.Join(root, "gitconfig")
			if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v %s", err, out)
			}
			write := func(path, content string) {
				if content == "" {
					return
				}
				os.MkdirAll(filepath.Dir(path), 0o755)
				if path == filepath.Join(repo, ".git", "config") {
					f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o644)
					f.WriteString(content)
					f.Close()
					return
				}
				os.WriteFile(path, []byte(content), 0o644)
			}
			write(system, tt.system)
			write(filepath.Join(xdg, "git", "config"), tt.xdg)
			write(filepath.Join(home, ".gitconfig"), tt.home)
			write(filepath.Join(repo, ".git", "config"), tt.loc)
			env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": xdg, "GIT_CONFIG_SYSTEM": system}
			for k, v := range tt.env {
				env[k] = v
			}
			got, ok := readUserEmail(filepath.Join(repo, ".git"), func(k string) string { return env[k] })
			if ok == tt.wantFallback {
				t.Fatalf("fast path = %v, want %v", ok, !tt.wantFallback)
			}
			if !ok {
				return
			}
			cmd := exec.Command("git", "config", "user.email")
			cmd.Dir = repo
			cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out, _ := cmd.Output()
			if want := strings.TrimSpace(string(out)); got != want {
				t.Errorf("read %q, git says %q", got, want)
			}
		})
	}
}

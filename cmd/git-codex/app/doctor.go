package app

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
)

// git codex doctor checks, for each agent CLI, what an unattended spawn
// needs and only a person can give, once: a sign-in, an API key approved,
// the repository trusted. It reads the CLIs' own files and changes
// nothing; for each problem it says exactly what to do.
//
// What git codex arranges itself, per spawn, because it is git codex's
// own (docs/DELEGATION.md): the MCP config of its server and its tools'
// approval (claude --allowedTools mcp__git-codex, codex
// default_tools_approval_mode, gemini trust: true), for Codex CLI the
// variables by which its server finds the pane's tmux server and a
// tool-call timeout past git codex's own, and the trust of the worktree it
// made for Gemini CLI (GEMINI_CLI_TRUST_WORKSPACE). What it
// never writes: a CLI's sign-in or onboarding, the approval of an API key,
// and the trust of the person's repository. Claude Code and Codex CLI
// look a worktree's trust up under the main repository, so trusting
// git codex's worktrees means trusting the person's own checkout: their
// decision, made once in the CLI's own dialog.

func (e *env) doctorCommand() *cli.Command {
	return &cli.Command{
		Name:      "doctor",
		Usage:     "check what Claude Code, Codex CLI and Gemini CLI need once from you before git codex can start them unattended",
		ArgsUsage: "[claude|codex|gemini...]",
		Action: func(c *cli.Context) error {
			names := c.Args().Slice()
			if len(names) == 0 {
				names = setupCLIs
			}
			for _, n := range names {
				if !isSetupCLI(n) {
					return usageError{err: fmt.Errorf("doctor checks %s, not %q", strings.Join(setupCLIs, ", "), n), help: "git codex doctor"}
				}
			}
			st, err := e.open()
			if err != nil {
				return err
			}
			defer st.Close()
			root := instance.MainWorkTree(st)
			if r, err := filepath.EvalSymlinks(root); err == nil {
				root = r
			}
			problems := 0
			report := func(cli string, ok bool, what, todo string) {
				if ok {
					fmt.Fprintf(e.stdout, "ok    %-7s %s\n", cli, what)
					return
				}
				problems++
				fmt.Fprintf(e.stdout, "FIX   %-7s %s\n              %s\n", cli, what, todo)
			}
			_, err = exec.LookPath("git-codex")
			report("all", err == nil, "git-codex is on PATH (agents start `git-codex mcp`)", "put the directory of git-codex on PATH of the shell that runs tmux")
			_, err = exec.LookPath("tmux")
			report("all", err == nil, "tmux is on PATH", "install tmux")
			for _, name := range names {
				prog, err := e.launcherArgv(c.Context, st, name)
				if err != nil {
					report(name, false, "installed", tools.AsError(err).Message)
					continue
				}
				report(name, true, "installed: "+prog[0], "")
				switch name {
				case "claude":
					e.doctorClaude(root, report)
				case "codex":
					if p := e.codexProvider(); p != "" && p != "openai" {
						// seen: Codex CLI asks for no sign-in when a
						// provider of the config is the model's
						report(name, true, "uses model provider "+p+" (config.toml model_provider): no sign-in asked", "")
					} else {
						out, err := runCLI(c.Context, prog, root, []string{"login", "status"})
						report(name, err == nil, "signed in", "sign in once: `codex login` (or `printenv OPENAI_API_KEY | codex login --with-api-key`); "+lastLine(out))
					}
					report(name, e.codexTrusts(root), "trusts "+root+" (Codex CLI applies a worktree's trust to its repository root)",
						"run `codex` in "+root+" once and choose \"Trust and continue\"")
				case "gemini":
					e.doctorGemini(report)
				}
			}
			if problems > 0 {
				return fmt.Errorf("%d thing(s) to do once before git codex can start these agents unattended (FIX above)", problems)
			}
			return nil
		},
	}
}

// homeFile is a file under the user's home directory.
func (e *env) homeFile(parts ...string) string {
	home := e.getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(append([]string{home}, parts...)...)
}

func (e *env) doctorClaude(root string, report func(string, bool, string, string)) {
	path := e.homeFile(".claude.json")
	if d := e.getenv("CLAUDE_CONFIG_DIR"); d != "" {
		path = filepath.Join(d, ".claude.json")
	}
	var cfg struct {
		HasCompletedOnboarding bool `json:"hasCompletedOnboarding"`
		OAuthAccount           any  `json:"oauthAccount"`
		CustomAPIKeyResponses  struct {
			Approved []string `json:"approved"`
		} `json:"customApiKeyResponses"`
		Projects map[string]struct {
			HasTrustDialogAccepted bool `json:"hasTrustDialogAccepted"`
		} `json:"projects"`
	}
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &cfg)
	}
	first := "run `claude` once and finish its first-run setup (theme, sign-in)"
	report("claude", err == nil && cfg.HasCompletedOnboarding, "first-run setup done ("+path+")", first)
	if key := e.getenv("ANTHROPIC_API_KEY"); key != "" {
		tail := key
		if len(tail) > 20 {
			tail = tail[len(tail)-20:]
		}
		approved := false
		for _, a := range cfg.CustomAPIKeyResponses.Approved {
			approved = approved || a == tail
		}
		report("claude", approved, "ANTHROPIC_API_KEY approved for use", "run `claude` once and answer Yes to \"Detected a custom API key in your environment\"")
	} else {
		_, cerr := os.Stat(filepath.Join(filepath.Dir(path), ".claude", ".credentials.json"))
		report("claude", cfg.OAuthAccount != nil || cerr == nil, "signed in (no ANTHROPIC_API_KEY set)", "run `claude` once and sign in, or set ANTHROPIC_API_KEY")
	}
	report("claude", cfg.Projects[root].HasTrustDialogAccepted, "trusts "+root+" (Claude Code looks a worktree's trust up under its main repository)",
		"run `claude` in "+root+" once and choose \"Yes, I trust this folder\"")
}

// codexConfig is Codex CLI's config.toml ($CODEX_HOME, else ~/.codex).
func (e *env) codexConfig() ([]byte, error) {
	home := e.getenv("CODEX_HOME")
	if home == "" {
		home = e.homeFile(".codex")
	}
	return os.ReadFile(filepath.Join(home, "config.toml"))
}

// codexProvider is the model_provider Codex CLI's config names at its top
// level (before any table), or "".
func (e *env) codexProvider() string {
	b, err := e.codexConfig()
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "[") {
			break
		}
		if k, v, ok := strings.Cut(l, "="); ok && strings.TrimSpace(k) == "model_provider" {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return ""
}

// codexTrusts reports whether Codex CLI's config trusts the project root.
func (e *env) codexTrusts(root string) bool {
	b, err := e.codexConfig()
	if err != nil {
		return false
	}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "[") {
			in = l == `[projects."`+root+`"]` || l == `[projects.'`+root+`']`
			continue
		}
		if in && strings.ReplaceAll(l, " ", "") == `trust_level="trusted"` {
			return true
		}
	}
	return false
}

func (e *env) doctorGemini(report func(string, bool, string, string)) {
	path := e.homeFile(".gemini", "settings.json")
	var s struct {
		Security struct {
			Auth struct {
				SelectedType string `json:"selectedType"`
			} `json:"auth"`
		} `json:"security"`
	}
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &s)
	}
	auth := s.Security.Auth.SelectedType
	key := e.getenv("GEMINI_API_KEY") != ""
	switch {
	case auth == "" && key:
		// measured: with the key in its environment Gemini CLI asks nothing
		report("gemini", true, "signs in with GEMINI_API_KEY (no sign-in method chosen in "+path+")", "")
	case auth == "gemini-api-key" && !key:
		report("gemini", false, "GEMINI_API_KEY is set (sign-in method gemini-api-key)", "export GEMINI_API_KEY in the shell that runs tmux")
	default:
		report("gemini", err == nil && auth != "", "sign-in method chosen ("+path+" security.auth.selectedType)",
			"run `gemini` once and choose how to sign in, or export GEMINI_API_KEY in the shell that runs tmux")
	}
}

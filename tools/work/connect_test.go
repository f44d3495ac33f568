package work

import (
	"context"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
)

// TestServerStartRefusesUselessCallers: git codex mcp refuses, at its
// start, a caller it would serve nothing useful (an unregistered id, a
// token that is not the agent's, none under required), and records the
// refusal; a person, an agent with its token, and (under warn) one without
// any start, writing nothing. Under off, tokens are not looked at.
func TestServerStartRefusesUselessCallers(t *testing.T) {
	ctx := context.Background()
	st, reg := connectRepo(t)
	token := tools.NewSecret(tools.PrefixAgentToken)
	putAgents(t, st, tools.Agent{ID: "alice", Type: tools.TypeWorker, State: tools.StateIdle, TokenHash: tools.HashSecret(token)})
	// the audit trail's length: the state's commits and the reads refs'
	// (where a refusal is recorded)
	tip := func() string {
		return gitstatetest.Git(t, st.WorkDir(), "rev-list", "--count", gitstate.RefState, "--glob="+gitstate.ReadsPrefix+"*/*")
	}
	setAuth := func(mode string) {
		t.Helper()
		if r := reg.CallAs(ctx, st, tools.Origin{ID: "human:t@example.com"}, "config_set", []byte(`{"key":"auth.agents","value":"`+mode+`"}`)); !r.OK {
			t.Fatal(r.Error)
		}
	}
	wrong := tools.NewSecret(tools.PrefixAgentToken)
	for _, c := range []struct {
		mode  string
		o     tools.Origin
		code  tools.Code
		words string
	}{
		{"warn", tools.Origin{ID: "human:t@example.com"}, "", ""},
		{"warn", tools.Origin{ID: "alice", Token: token}, "", ""},
		{"warn", tools.Origin{ID: "alice"}, "", ""},
		{"warn", tools.Origin{ID: "alicee", Token: token}, tools.AgentNotFound, `"alicee" is not a registered agent`},
		{"warn", tools.Origin{ID: "alice", Token: wrong}, tools.AuthFailed, "CODEX_TOKEN is not the credential of agent alice"},
		{"required", tools.Origin{ID: "alice"}, tools.AuthFailed, "has no credential here"},
		{"required", tools.Origin{ID: "alice", Token: token}, "", ""},
		{"required", tools.Origin{ID: "human:t@example.com", AgentEnv: true}, tools.AuthFailed, "agent's environment"},
		{"off", tools.Origin{ID: "alice", Token: wrong}, "", ""},
		{"off", tools.Origin{ID: "nobody"}, tools.AgentNotFound, ""},
	} {
		setAuth(c.mode)
		before := tip()
		_, e := reg.CheckServer(ctx, st, c.o)
		switch {
		case c.code == "" && e != nil:
			t.Errorf("%s %+v: refused %s: %s", c.mode, c.o, e.Code, e.Message)
		case c.code == "" && tip() != before:
			t.Errorf("%s %+v: a start that passes committed", c.mode, c.o)
		case c.code != "" && (e == nil || e.Code != c.code || !strings.Contains(e.Message, c.words)):
			t.Errorf("%s %+v: got %+v, want %s (%q)", c.mode, c.o, e, c.code, c.words)
		case c.code != "" && tip() == before:
			t.Errorf("%s %+v: the refusal was not recorded", c.mode, c.o)
		}
	}
}

// TestMarkUp: the first answer of an instance's own server makes it ACTIVE
// (REVIEWING for a reviewer) in a commit of its own; an instance already
// up, a registered agent and a person write nothing.
func TestMarkUp(t *testing.T) {
	ctx := context.Background()
	st, reg := connectRepo(t)
	putAgents(t, st,
		tools.Agent{ID: "coder-1", Type: tools.TypeCoding, State: tools.StateIdle, Status: tools.StatusStarting},
		tools.Agent{ID: "review-1", Type: tools.TypeReview, State: tools.StateIdle, Status: tools.StatusStarting, ReviewOf: "coder-1"},
		tools.Agent{ID: "alice", Type: tools.TypeWorker, State: tools.StateIdle},
	)
	for _, c := range []struct{ id, want string }{
		{"coder-1", tools.StatusActive}, {"review-1", tools.StatusReviewing}, {"coder-1", ""}, {"alice", ""}, {"human:t@example.com", ""},
	} {
		got, err := reg.MarkUp(ctx, st, tools.Origin{ID: c.id}, "claude-code")
		if err != nil || got != c.want {
			t.Errorf("MarkUp(%s) = %q, %v; want %q", c.id, got, err, c.want)
		}
	}
	var a tools.Agent
	st.View(ctx, func(sn *gitstate.Snapshot) error { return sn.Get(tools.AgentPath("coder-1"), &a) })
	if a.Status != tools.StatusActive {
		t.Errorf("coder-1 is %s", a.Status)
	}
	ev, err := st.Event(ctx, gitstate.RefState)
	if err != nil || ev.Summary != "mcp: review-1 is up: claude-code connected to its git codex mcp" {
		t.Errorf("review-1's commit: %q %v", ev.Summary, err)
	}
}

// The screens the real CLIs stop at (as captured from their panes) are
// recognised as their own; an agent at its input is not.
func TestBlockedAt(t *testing.T) {
	for _, c := range []struct{ cli, screen, what string }{
		{"claude", " Accessing workspace:\n /tmp/r.codex-worktrees/c1\n Quick safety check: Is this a project you created or one you trust?\n ❯ No, exit\n   Yes, I trust this folder\n Enter to confirm · Esc to cancel", "Claude Code's workspace-trust dialog"},
		{"codex", "  Choose how you want to use Codex.\n> 1. Sign in with ChatGPT\n  2. Sign in with Device Code\n  Press enter to continue", "Codex CLI's sign-in menu"},
		{"codex", "  Trust this folder? Codex can read, edit, and run files here\n› 1. Trust and continue\n  enter continue · esc back", "Codex CLI's folder-trust prompt"},
		{"gemini", "│ ? Get started\n│   How would you like to authenticate for this project?\n│   ● 1. Sign in with Google\n│   (Use Enter to select)", "Gemini CLI's sign-in choice"},
		{"mine", "pick one\n> 1. a\nPress enter to continue", "a menu waiting for a choice"},
		{"codex", "  Would you like to run the following command?\n  $ rm -rf build\n› 1. Yes, proceed", "Codex CLI's approval of a command"},
		{"claude", "❯ You are c2, a coding agent\n───\n❯ \n───\n  ⏵⏵ auto mode on (shift+tab to cycle)", ""},
		{"codex", "• Reconnecting... 4/5\n› Ask Codex to do anything\n  GPT default", ""},
	} {
		b, ok := instance.BlockedAt(c.cli, c.screen)
		if ok != (c.what != "") || b.What != c.what {
			t.Errorf("%s: BlockedAt = %q, %v; want %q", c.cli, b.What, ok, c.what)
		}
	}
}

func connectRepo(t *testing.T) (*gitstate.Store, *tools.Registry) {
	t.Helper()
	st, err := gitstate.Open(gitstatetest.NewRepo(t), gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := tools.NewRegistry(tools.Catalog{}).Init(context.Background(), st, tools.Origin{ID: "human:t@example.com"}); err != nil {
		t.Fatal(err)
	}
	return st, Builtin()
}

func putAgents(t *testing.T, st *gitstate.Store, agents ...tools.Agent) {
	t.Helper()
	if _, err := st.Update(context.Background(), func(tx *gitstate.Tx) error {
		tx.SetMeta(gitstate.Meta{Summary: "agents"})
		for _, a := range agents {
			if err := tx.Put(tools.AgentPath(a.ID), a); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

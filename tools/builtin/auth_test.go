package builtin_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/tools"
)

// TestWarnModeWarns is issue 29 item 13: under auth.agents=warn a call as
// an agent without its valid credential got only an audit trailer; nothing
// the caller or a person sees said so. Its result now carries a warning
// (the CLI prints it on stderr, --json and MCP carry it in the envelope),
// whatever the call's outcome; a call with the valid token, a person's
// call, and every call under auth.agents=off get none.
func TestWarnModeWarns(t *testing.T) {
	e := newEnv(t)
	out := e.ok(human, "agent_register", `{"id":"alice","type":"worker"}`)
	token, _ := out["token"].(string)
	if !strings.HasPrefix(token, "ctok_") {
		t.Fatalf("agent_register: %v", out)
	}
	call := func(o tools.Origin, tool, args string) tools.Result {
		t.Helper()
		return e.reg.CallAs(context.Background(), e.st, o, tool, json.RawMessage(args))
	}
	warned := func(r tools.Result, want string) {
		t.Helper()
		all := strings.Join(r.Warnings, "\n")
		if want == "" && all != "" || want != "" && !strings.Contains(all, want) {
			t.Errorf("warnings %q, want %q", r.Warnings, want)
		}
		if strings.Contains(all, token) {
			t.Errorf("a warning shows the token")
		}
	}
	warned(call(tools.Origin{ID: "alice"}, "agent_get_status", `{}`), "call as agent alice without its credential")
	warned(call(tools.Origin{ID: "alice", Token: "ctok_wrong"}, "agent_get_status", `{}`), "not its own")
	warned(call(tools.Origin{ID: "alice"}, "mail_send", `{"to":"nobody-here","subject":"s","body":"b"}`), "without its credential") // refused too
	warned(call(tools.Origin{ID: "alice", Token: token}, "agent_get_status", `{}`), "")
	warned(call(tools.Origin{ID: human}, "agent_list", `{}`), "")
	e.ok(human, "config_set", `{"key":"auth.agents","value":"off"}`)
	warned(call(tools.Origin{ID: "alice"}, "agent_get_status", `{}`), "")
}

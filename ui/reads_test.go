package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
)

// Reads and refusals are recorded on the machine's reads refs (issue 27):
// the page's log shows what changed, and with reads=1 (the "with reads"
// box; errors=1 too) the reads and refusals among the changes, newest
// first, paged without losing or repeating one.
func TestEventsWithReads(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	st, err := gitstate.Open(dir, gitstate.Options{Now: func() time.Time { now = now.Add(time.Second); return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	if _, err := builtin.Registry().Init(ctx, st, tools.Origin{ID: human}); err != nil {
		t.Fatal(err)
	}
	reg := builtin.Registry()
	call := func(caller, tool, args string) tools.Result {
		return reg.CallAs(ctx, st, tools.Origin{ID: caller}, tool, json.RawMessage(args))
	}
	call(human, "agent_register", `{"id":"alice","type":"worker"}`)
	call(human, "mail_send", `{"to":"alice","subject":"hi","body":"there"}`)
	call("alice", "mail_list_inbox", `{}`)
	if r := call("alice", "mail_send", `{"to":"nobody","subject":"x","body":"y"}`); r.OK {
		t.Fatal("mail to nobody was accepted")
	}
	srv, err := New(Options{Store: st, Registry: reg, Caller: human})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	events := func(q string) eventPage {
		t.Helper()
		req := httptest.NewRequestWithContext(ctx, "GET", "/api/events?"+q, nil)
		req.Host = "127.0.0.1"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var p eventPage
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &p) != nil {
			t.Fatalf("%s: %d %s", q, rec.Code, rec.Body.String())
		}
		return p
	}
	kinds := func(evs []eventJSON) string {
		var out []string
		for _, e := range evs {
			out = append(out, e.Tool+":"+e.Kind)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct{ q, want string }{
		{"", "mail_send:change agent_register:change init:change"},
		{"reads=1", "mail_send:refusal mail_list_inbox:read mail_send:change agent_register:change init:change"},
		{"errors=1", "mail_send:refusal"},
		{"reads=1&changes=1", "mail_send:change agent_register:change init:change"},
	} {
		if got := kinds(events(tc.q).Events); got != tc.want {
			t.Errorf("?%s: %s, want %s", tc.q, got, tc.want)
		}
	}
	first := events("reads=1&limit=2")
	rest := events("reads=1&limit=50&before=" + first.Next)
	if got := kinds(append(first.Events, rest.Events...)); got != "mail_send:refusal mail_list_inbox:read mail_send:change agent_register:change init:change" {
		t.Errorf("paged: %s", got)
	}
}

package work

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/mail"
)

// escalationRegistry has a tool "boom" that fails as asked.
func escalationRegistry() *tools.Registry {
	type boomIn struct {
		Code string `json:"code"`
	}
	boom := tools.Define("boom", "boom.run", "test tool", tools.CLI{}, func(ctx context.Context, c *tools.Call, in boomIn) (struct{}, error) {
		return struct{}{}, tools.Errorf(tools.Code(in.Code), "it broke (token ghp_TESTtokenTESTtokenTESTtokenTESTtoken12 inside)")
	})
	cat := BuiltinCatalog() // its hooks: escalation is what these tests test
	cat.Tools = []*tools.Tool{boom, AgentRegister, mail.MailListInbox, tools.ConfigSet}
	return tools.NewRegistry(cat)
}

func TestEscalationFoldsPerHour(t *testing.T) {
	st := escalationStore(t)
	ctx := context.Background()
	reg := escalationRegistry()
	call := func(caller, tool, args string) tools.Result {
		t.Helper()
		return reg.CallAs(ctx, st, tools.Origin{ID: caller}, tool, json.RawMessage(args))
	}
	const person = "human:test@example.com"
	for _, a := range []string{`{"id":"boss","type":"supervisor"}`, `{"id":"s2","type":"supervisor","supervisor":"boss"}`} {
		if r := call(person, "agent_register", a); !r.OK {
			t.Fatal(r.Error)
		}
	}
	inbox := func(who string) []map[string]any {
		t.Helper()
		r := call(who, "mail_list_inbox", `{"include_read":true}`)
		if !r.OK {
			t.Fatal(r.Error)
		}
		b, _ := json.Marshal(r.Data)
		var in struct{ Mails []map[string]any }
		json.Unmarshal(b, &in)
		return in.Mails
	}
	// the caller's own mistake, or a person's failure: nobody is mailed
	call("s2", "boom", `{"code":"INVALID_INPUT"}`)
	// and a person's failure is one commit, the call's own, not a second
	// saying that nobody was mailed
	commits := func() int { // the state's and the reads refs'
		n := 0
		reads, err := st.ReadsRefs()
		if err != nil {
			t.Fatal(err)
		}
		st.EventsOf(ctx, append([]string{""}, reads...), func(gitstate.Event) bool { n++; return true })
		return n
	}
	before := commits()
	call(person, "boom", `{"code":"INTERNAL_ERROR"}`)
	if n := commits() - before; n != 1 {
		t.Fatalf("a person's failure made %d commits, want 1 (the call's own)", n)
	}
	if m := inbox("boss"); len(m) != 0 {
		t.Fatalf("mailed for a caller's own mistake: %v", m)
	}
	// a failure nobody's input caused: the supervisor hears once an hour
	for range 3 {
		if r := call("s2", "boom", `{"code":"INTERNAL_ERROR"}`); r.OK || r.Error.Code != tools.InternalError {
			t.Fatalf("got %+v", r)
		}
	}
	m := inbox("boss")
	if len(m) != 1 || m[0]["subject"] != "boom failed: INTERNAL_ERROR" || !strings.Contains(m[0]["body"].(string), "it broke") ||
		strings.Contains(m[0]["body"].(string), "ghp_TEST") {
		t.Fatalf("boss's mail: %v", m)
	}
	// an hour on, the next failure is mailed with the count folded into it
	key := escalationKey("boss", "boom", tools.InternalError)
	_, err := st.Update(ctx, func(tx *gitstate.Tx) error {
		var e Escalation
		if err := tx.Get(escalationPath(key), &e); err != nil {
			return err
		}
		if e.Folded != 2 {
			t.Errorf("folded %d, want 2", e.Folded)
		}
		e.LastMailAt = e.LastMailAt.Add(-foldWindow - time.Minute)
		tx.SetMeta(gitstate.Meta{Summary: "test: an hour passes"})
		return tx.Put(escalationPath(key), e)
	})
	if err != nil {
		t.Fatal(err)
	}
	call("s2", "boom", `{"code":"INTERNAL_ERROR"}`)
	m = inbox("boss")
	if len(m) != 2 || !strings.Contains(m[0]["body"].(string), "2 more failure(s) of this kind") {
		t.Fatalf("boss's mail after an hour: %v", m)
	}
	// critical tools: the people hear too, CRITICAL first
	if r := call(person, "config_set", `{"key":"escalation.critical","value":"boom"}`); !r.OK {
		t.Fatal(r.Error)
	}
	call("s2", "boom", `{"code":"TRANSIENT_ERROR"}`)
	people := inbox(person)
	if len(people) != 1 || people[0]["subject"] != "CRITICAL: boom failed: TRANSIENT_ERROR" {
		t.Fatalf("people's mail: %v", people)
	}
	if m := inbox("boss"); len(m) != 3 || m[0]["subject"] != "CRITICAL: boom failed: TRANSIENT_ERROR" || strings.Contains(m[0]["body"].(string), "github retry") {
		t.Fatalf("boss's mail: %v", m)
	}
}

// escalationStore is a state where people may call every tool (the test
// tool boom is in no default policy).
func escalationStore(t *testing.T) *gitstate.Store {
	t.Helper()
	st, err := gitstate.Open(gitstatetest.NewRepo(t), gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := tools.NewRegistry(tools.Catalog{}).Init(context.Background(), st, tools.Origin{ID: "human:t@example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Update(context.Background(), func(tx *gitstate.Tx) error {
		tx.SetMeta(gitstate.Meta{Summary: "policy"})
		v, _ := json.Marshal("*")
		return tx.Put(tools.PathConfig, tools.Config{Entries: map[string]tools.ConfigEntry{"policy.human.allow": {Value: v, SetBy: "t"}}})
	}); err != nil {
		t.Fatal(err)
	}
	return st
}

package ui

import (
	"testing"

	"github.com/gitcodex/git-codex/tools/mail"
	"github.com/gitcodex/git-codex/tools/work"
)

// TestArchivedRecordsAt: records `git codex archive` took off the tip
// (retention) are gone from the current state, and ?at= the commit they
// were taken from (the archive's "from") still shows them.
func TestArchivedRecordsAt(t *testing.T) {
	f := newFixture(t, true, Options{})
	f.call(t, human, "agent_register", `{"id":"alice","type":"worker"}`)
	sent := f.call(t, human, "mail_send", `{"to":"alice","subject":"old","body":"read long ago"}`).Data.(mail.MailSent)
	f.call(t, human, "mail_send", `{"to":"alice","subject":"new","body":"unread"}`)
	f.call(t, "alice", "mail_read", `{"mail_id":"`+sent.MailID+`"}`)
	out := f.call(t, human, "archive", `{"older_than":"0"}`).Data.(*work.ArchiveOut)
	if out.Total != 1 || out.Ref == "" {
		t.Fatalf("archive: %+v", out)
	}
	var now, past stateJSON
	get(t, f.url+"/api/state", &now)
	if m := now.Mail["alice"]; m.Total != 1 || m.Unread != 1 {
		t.Fatalf("tip after the archive: alice's mail %+v, want the unread one only", m)
	}
	get(t, f.url+"/api/state?at="+out.From, &past)
	if m := past.Mail["alice"]; past.Tip || m.Total != 2 || m.Unread != 1 {
		t.Fatalf("?at= the archive's from: alice's mail %+v", m)
	}
}

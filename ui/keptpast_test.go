package ui

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/gitcodex/git-codex/tools/mail"
	"github.com/gitcodex/git-codex/tools/work"
)

// keptPastMail is the file a server keeps the mail parts of the past
// states it showed in (gitstate.KeepParts.ReadOnly).
func keptPastMail(dir string) string {
	return filepath.Join(dir, ".git", "codex", "reduced", "ui.kind.mail.past.parts")
}

// firstAnswer is the body a server started afresh on dir answers to its
// first GET path.
func firstAnswer(t *testing.T, dir, path string) []byte {
	t.Helper()
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := New(Options{Store: st, Registry: builtin.Registry(), Caller: human})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequestWithContext(context.Background(), "GET", path, nil)
	req.Host = "127.0.0.1"
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

// TestPastPartsGiveWhatAWholeReadGives: ?at= a past state keeps the parts
// it made afresh for the next server (the past states' file, apart from
// the tip's, which it leaves as it was), and a server that finds them
// answers /api/state?at= and /api/events?at= with the very bytes a
// server with no kept parts answers, and /api/state?at= as reading every
// record of that state does: past states before and after writes, a
// mail read and an archive, each asked after the others (the past file
// then holds another state's parts, some of the same records with other
// bytes), and the tip after them.
func TestPastPartsGiveWhatAWholeReadGives(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, true, Options{})
	dir := f.st.WorkDir()
	commit := func() string {
		var c string
		if err := f.st.View(ctx, func(sn *gitstate.Snapshot) error { c = sn.Commit(); return nil }); err != nil {
			t.Fatal(err)
		}
		return c
	}
	f.call(t, human, "agent_register", `{"id":"alice","type":"worker"}`)
	f.call(t, human, "agent_register", `{"id":"bob","type":"worker"}`)
	for i := 0; i < perKind+20; i++ {
		f.call(t, human, "mail_send", fmt.Sprintf(`{"to":%q,"subject":"s%d","body":"b"}`, []string{"alice", "bob"}[i%2], i))
	}
	f.call(t, human, "task_create", `{"title":"t1","description":"d"}`)
	beforeWrites := commit()
	read := firstUnread(t, f, "alice")
	f.call(t, "alice", "mail_read", `{"mail_id":"`+read+`"}`)
	later := f.call(t, human, "mail_send", `{"to":"bob","subject":"later","body":"b"}`).Data.(mail.MailSent)
	f.call(t, human, "lock_acquire", `{"name":"db"}`)
	afterARead := commit()
	f.call(t, "bob", "mail_read", `{"mail_id":"`+later.MailID+`"}`)
	afterAnotherRead := commit()
	if out := f.call(t, human, "archive", `{"older_than":"0"}`).Data.(*work.ArchiveOut); out.Total == 0 {
		t.Fatalf("archive: %+v", out)
	}
	f.call(t, human, "mail_send", `{"to":"alice","subject":"after the archive","body":"b"}`)
	afterArchive := commit()
	f.call(t, human, "mail_send", `{"to":"bob","subject":"the tip","body":"b"}`)

	reduced := filepath.Join(dir, ".git", "codex", "reduced")
	// what a server with no kept parts answers
	want := map[string][]byte{}
	pasts := []string{beforeWrites, afterARead, afterAnotherRead, afterArchive}
	for _, at := range pasts {
		for _, p := range []string{"/api/state?at=" + at, "/api/events?limit=50&at=" + at} {
			os.RemoveAll(reduced)
			want[p] = firstAnswer(t, dir, p)
		}
	}
	os.RemoveAll(reduced)
	firstAnswer(t, dir, "/api/state") // the tip's parts kept, as a server leaves them
	tipKept, err := os.ReadFile(keptMail(dir))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(keptPastMail(dir)); !os.IsNotExist(err) {
		t.Fatalf("the tip's page kept a past file: %v", err)
	}
	for round, ats := range [][]string{pasts, pasts, {afterArchive, afterAnotherRead, afterARead, beforeWrites}} {
		for _, at := range ats {
			when := fmt.Sprintf("round %d, ?at=%.7s", round, at)
			p := "/api/state?at=" + at
			got := firstAnswer(t, dir, p)
			if !bytes.Equal(got, want[p]) {
				t.Errorf("%s: /api/state answered\n%.600s\nwith no kept parts:\n%.600s", when, got, want[p])
			}
			sameAsWhole(t, f, when, at, firstState(t, dir, at))
			if _, err := os.Stat(keptPastMail(dir)); err != nil {
				t.Fatalf("%s: no past parts kept: %v", when, err)
			}
			p = "/api/events?limit=50&at=" + at
			if got := firstAnswer(t, dir, p); !bytes.Equal(got, want[p]) {
				t.Errorf("%s: /api/events answered\n%.600s\nwith no kept parts:\n%.600s", when, got, want[p])
			}
		}
	}
	if now, _ := os.ReadFile(keptMail(dir)); !bytes.Equal(now, tipKept) {
		t.Error("?at= a past state rewrote the tip's kept parts")
	}
	sameAsWhole(t, f, "the tip after the past states", "", firstState(t, dir, ""))
}

package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/gitcodex/git-codex/tools/mail"
	"github.com/gitcodex/git-codex/tools/work"
)

// keptMail is the file a server keeps the page's mail parts in
// (kindReduction, gitstate.KeepParts.Depth).
func keptMail(dir string) string {
	return filepath.Join(dir, ".git", "codex", "reduced", "ui.kind.mail.parts")
}

// firstState is what a server started afresh on dir answers first (a new
// store: a process's memory starts empty), ?at= at when at is set.
func firstState(t *testing.T, dir, at string) stateJSON {
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
	path := "/api/state"
	if at != "" {
		path += "?at=" + at
	}
	req := httptest.NewRequestWithContext(context.Background(), "GET", path, nil)
	req.Host = "127.0.0.1"
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	var out stateJSON
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
		t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
	return out
}

// sameAsWhole fails unless got (an /api/state answer) shows what reading
// every record of the state at at ("" the tip) shows.
func sameAsWhole(t *testing.T, f *fixture, when, at string, got stateJSON) {
	t.Helper()
	want := wholeKindsAt(t, f, at)
	if !reflect.DeepEqual(got.Mail, want.Mail) {
		t.Errorf("%s: mail %v, reading every record %v", when, got.Mail, want.Mail)
	}
	for _, k := range got.Kinds {
		if k.Name == "agent" {
			continue
		}
		w, _ := json.Marshal(want.kinds[k.Name])
		g, _ := json.Marshal(k)
		if string(g) != string(w) {
			t.Errorf("%s: kind %s:\n%.400s\nreading every record:\n%.400s", when, k.Name, g, w)
		}
	}
}

// TestKeptPartsGiveWhatAWholeReadGives: a server started afresh reads
// the page's parts another server kept (gitstate.KeepParts, by tree id)
// and answers /api/state as reading every record does — after writes, a
// mail read (the part of a directory whose records did not change
// name), a sync that brings a peer's mail and an archive that takes
// records off the tip; and ?at= a past state uses them too, with the past
// state's answer, without putting its parts in the file.
func TestKeptPartsGiveWhatAWholeReadGives(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, true, Options{})
	dir := f.st.WorkDir()
	f.call(t, human, "agent_register", `{"id":"alice","type":"worker"}`)
	f.call(t, human, "agent_register", `{"id":"bob","type":"worker"}`)
	for i := 0; i < perKind+20; i++ {
		f.call(t, human, "mail_send", fmt.Sprintf(`{"to":%q,"subject":"s%d","body":"b"}`, []string{"alice", "bob"}[i%2], i))
	}
	f.call(t, human, "task_create", `{"title":"t1","description":"d"}`)
	var past string
	if err := f.st.View(ctx, func(sn *gitstate.Snapshot) error { past = sn.Commit(); return nil }); err != nil {
		t.Fatal(err)
	}

	check := func(when string) {
		t.Helper()
		sameAsWhole(t, f, when, "", firstState(t, dir, ""))
		if _, err := os.Stat(keptMail(dir)); err != nil {
			t.Fatalf("%s: no kept parts: %v", when, err)
		}
	}
	check("no kept parts yet")
	check("the parts the last server kept")

	f.call(t, "alice", "mail_read", `{"mail_id":"`+firstUnread(t, f, "alice")+`"}`)
	old := f.call(t, human, "mail_send", `{"to":"bob","subject":"later","body":"b"}`).Data.(mail.MailSent)
	f.call(t, human, "lock_acquire", `{"name":"db"}`)
	check("after writes and a mail read")

	// a peer's mail comes with a sync
	origin := filepath.Join(t.TempDir(), "origin.git")
	gitstatetest.Git(t, filepath.Dir(origin), "init", "-q", "--bare", origin)
	gitstatetest.Git(t, dir, "remote", "add", "origin", origin)
	reg := builtin.Registry()
	if _, err := reg.Sync(ctx, f.st, tools.Origin{ID: human}, "origin", true, nil); err != nil {
		t.Fatal(err)
	}
	peerDir := gitstatetest.NewRepo(t)
	gitstatetest.Git(t, peerDir, "remote", "add", "origin", origin)
	peer, err := gitstate.Open(peerDir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	if _, err := reg.Sync(ctx, peer, tools.Origin{ID: human}, "origin", true, nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if r := reg.CallAs(ctx, peer, tools.Origin{ID: "bob"}, "mail_send", json.RawMessage(fmt.Sprintf(`{"to":"alice","subject":"from the peer %d","body":"b"}`, i))); !r.OK {
			t.Fatal(r.Error)
		}
	}
	if _, err := reg.Sync(ctx, peer, tools.Origin{ID: human}, "origin", true, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Sync(ctx, f.st, tools.Origin{ID: human}, "origin", false, nil); err != nil {
		t.Fatal(err)
	}
	got := firstState(t, dir, "")
	if got.Mail["alice"].Total != (perKind+20)/2+3 {
		t.Fatalf("after the sync: alice's mail %+v, want the peer's 3 too", got.Mail["alice"])
	}
	check("after a sync")

	f.call(t, "bob", "mail_read", `{"mail_id":"`+old.MailID+`"}`)
	out := f.call(t, human, "archive", `{"older_than":"0"}`).Data.(*work.ArchiveOut)
	if out.Total == 0 {
		t.Fatalf("archive: %+v", out)
	}
	check("after an archive")

	// a past state: its answer, from the kept parts where it shares the
	// tip's directories, and the file left as the tip's
	before, err := os.ReadFile(keptMail(dir))
	if err != nil {
		t.Fatal(err)
	}
	at := firstState(t, dir, past)
	if at.Tip || at.Commit != past {
		t.Fatalf("?at=%s answered %s (tip %v)", past, at.Commit, at.Tip)
	}
	sameAsWhole(t, f, "?at= a past state", past, at)
	if after, _ := os.ReadFile(keptMail(dir)); !bytes.Equal(after, before) {
		t.Error("?at= a past state rewrote the kept parts")
	}

	// a past state whose newest mail the tip has with other bytes (read
	// since): the page shows it as it was then
	sent := f.call(t, human, "mail_send", `{"to":"alice","subject":"newest","body":"b"}`).Data.(mail.MailSent)
	var unread string
	if err := f.st.View(ctx, func(sn *gitstate.Snapshot) error { unread = sn.Commit(); return nil }); err != nil {
		t.Fatal(err)
	}
	f.call(t, "alice", "mail_read", `{"mail_id":"`+sent.MailID+`"}`)
	check("after the newest mail was read")
	sameAsWhole(t, f, "?at= before the newest mail was read", unread, firstState(t, dir, unread))
}

// TestKeptPartsFileNotTrusted: a kept parts file that is damaged (a byte
// changed, cut short, not one at all) or another reduction's is not used:
// the server reads every record, answers as a whole read does, and
// replaces the file with one of its own, which the next server uses.
func TestKeptPartsFileNotTrusted(t *testing.T) {
	f := newFixture(t, true, Options{})
	dir := f.st.WorkDir()
	f.call(t, human, "agent_register", `{"id":"alice","type":"worker"}`)
	for i := 0; i < 40; i++ {
		f.call(t, human, "mail_send", fmt.Sprintf(`{"to":"alice","subject":"s%d","body":"b"}`, i))
	}
	f.call(t, "alice", "mail_read", `{"mail_id":"`+firstUnread(t, f, "alice")+`"}`)
	f.call(t, human, "task_create", `{"title":"t1","description":"d"}`)
	sameAsWhole(t, f, "first", "", firstState(t, dir, ""))
	good, err := os.ReadFile(keptMail(dir))
	if err != nil {
		t.Fatal(err)
	}
	task, err := os.ReadFile(strings.Replace(keptMail(dir), "mail", "task", 1))
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0x01
	for name, bad := range map[string][]byte{
		"a byte changed":        flipped,
		"cut short":             good[:len(good)-9],
		"not a kept parts file": []byte(`{"mail":{"tree":"` + strings.Repeat("0", 40) + `","part":{}}}`),
		"another reduction's":   task,
		"empty":                 nil,
		"its sum and nothing":   good[len(good)-4:],
	} {
		if err := os.WriteFile(keptMail(dir), bad, 0o644); err != nil {
			t.Fatal(err)
		}
		sameAsWhole(t, f, name, "", firstState(t, dir, ""))
		now, err := os.ReadFile(keptMail(dir))
		if err != nil || !bytes.Equal(now, good) {
			t.Errorf("%s: the file was not replaced with the state's parts (%d bytes, %v)", name, len(now), err)
		}
	}
}

// TestKeptPartsShared: under core.sharedRepository=group the kept parts'
// directory and file get the modes git gives its own (the group writes
// them), as the store's other files under .git/codex do.
func TestKeptPartsShared(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	gitstatetest.Git(t, dir, "config", "core.sharedRepository", "group")
	f := newFixtureAt(t, dir, true, Options{})
	f.call(t, human, "agent_register", `{"id":"alice","type":"worker"}`)
	f.call(t, human, "mail_send", `{"to":"alice","subject":"s","body":"b"}`)
	sameAsWhole(t, f, "shared", "", firstState(t, dir, ""))
	for path, want := range map[string]os.FileMode{
		filepath.Dir(keptMail(dir)): os.ModeDir | os.ModeSetgid | 0o775,
		keptMail(dir):               0o664,
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode(), want)
		}
	}
}

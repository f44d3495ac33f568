package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestStateByPartsReadsWhatAWholeReadDoes: /api/state made by directory
// (kindReduction, the parts remembered by tree id) shows what reading
// every record of every kind shows (readKind, what it was made of
// before): counts, the newest perKind records and mail per recipient —
// on a fresh server, and again after changes, when most parts come from
// the store's memory.
func TestStateByPartsReadsWhatAWholeReadDoes(t *testing.T) {
	f := newFixture(t, true, Options{})
	f.call(t, human, "agent_register", `{"id":"alice","type":"worker"}`)
	f.call(t, human, "agent_register", `{"id":"bob","type":"worker"}`)
	for i := 0; i < perKind+20; i++ {
		to := []string{"alice", "bob"}[i%2]
		f.call(t, human, "mail_send", fmt.Sprintf(`{"to":%q,"subject":"s%d","body":"b"}`, to, i))
	}
	f.call(t, human, "task_create", `{"title":"t1","description":"d"}`)
	check := func(when string) {
		t.Helper()
		var got stateJSON
		if code := get(t, f.url+"/api/state", &got); code != 200 {
			t.Fatalf("%s: %d", when, code)
		}
		want := wholeKinds(t, f)
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
	check("fresh")
	f.call(t, "alice", "mail_read", `{"mail_id":"`+firstUnread(t, f, "alice")+`"}`)
	f.call(t, human, "mail_send", `{"to":"bob","subject":"later","body":"b"}`)
	f.call(t, human, "lock_acquire", `{"name":"db"}`)
	check("after changes")
}

// wholeState is /api/state's kinds and mail as reading every record makes
// them.
type wholeState struct {
	kinds map[string]kindJSON
	Mail  map[string]mailCount
}

func wholeKinds(t *testing.T, f *fixture) wholeState {
	t.Helper()
	return wholeKindsAt(t, f, "")
}

// wholeKindsAt is wholeKinds of the state at a commit ("" the tip).
func wholeKindsAt(t *testing.T, f *fixture, at string) wholeState {
	t.Helper()
	out := wholeState{kinds: map[string]kindJSON{}, Mail: map[string]mailCount{}}
	err := f.st.ViewAt(context.Background(), at, func(sn *gitstate.Snapshot) error {
		for _, k := range f.reg.Kinds() {
			recs, err := readKind(sn, k.Dir, "")
			if err != nil {
				return err
			}
			kj := kindJSON{Name: k.Name, Dir: k.Dir, Count: len(recs), Records: []json.RawMessage{}}
			for i, rec := range recs {
				if i == perKind {
					kj.More = true
					break
				}
				kj.Records = append(kj.Records, rec.data)
			}
			out.kinds[k.Name] = kj
			if k.Name != "mail" {
				continue
			}
			for _, rec := range recs {
				var m struct {
					To     string `json:"to"`
					IsRead bool   `json:"is_read"`
				}
				if json.Unmarshal(rec.data, &m) != nil {
					continue
				}
				c := out.Mail[m.To]
				c.Total++
				if !m.IsRead {
					c.Unread++
				}
				out.Mail[m.To] = c
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func firstUnread(t *testing.T, f *fixture, agent string) string {
	t.Helper()
	r := f.call(t, agent, "mail_list_inbox", `{}`)
	b, _ := json.Marshal(r.Data)
	var in struct {
		Mails []struct {
			ID string `json:"id"`
		} `json:"mails"`
	}
	if err := json.Unmarshal(b, &in); err != nil || len(in.Mails) == 0 {
		t.Fatalf("inbox of %s: %s", agent, b)
	}
	return in.Mails[0].ID
}

// TestStateCountsRecordsByName: the page counts a kind's records by their
// files' names (it reads no record only to count it), and shows of the
// newest only what is JSON: a file that is not, which sync would refuse
// but a commit made by hand can hold, is counted and not shown, and the
// answer stays JSON. Mail, whose recipient is inside, counts only what
// it can read.
func TestStateCountsRecordsByName(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	f := newFixtureAt(t, dir, true, Options{})
	f.call(t, human, "agent_register", `{"id":"alice","type":"worker"}`)
	f.call(t, human, "task_create", `{"title":"t1","description":"d"}`)
	f.call(t, human, "mail_send", `{"to":"alice","subject":"s","body":"b"}`)
	var tasks, mail []string
	for _, p := range strings.Split(gitOut(t, dir, "ls-tree", "-r", "--name-only", gitstate.RefState), "\n") {
		switch {
		case strings.HasPrefix(p, "tasks/"):
			tasks = append(tasks, p)
		case strings.HasPrefix(p, "mail/"):
			mail = append(mail, p)
		}
	}
	if len(tasks) != 1 || len(mail) != 1 {
		t.Fatalf("tasks %v, mail %v: want one of each", tasks, mail)
	}
	// beside each, a file named as the newest record, that is not JSON
	git := gitstatetest.IndexGit(t, dir)
	git("read-tree", gitstate.RefState)
	blob := git("hash-object", "-w", "--stdin") // empty: not JSON
	for _, p := range []string{tasks[0], mail[0]} {
		git("update-index", "--add", "--cacheinfo", "100644,"+blob+","+path.Dir(p)+"/zzzzzzzz.json")
	}
	git("update-ref", gitstate.RefState, git("commit-tree", git("write-tree"), "-p", gitstate.RefState, "-m", "by hand"))

	var got stateJSON
	if code := get(t, f.url+"/api/state", &got); code != 200 {
		t.Fatalf("/api/state: %d", code)
	}
	for _, k := range got.Kinds {
		switch k.Name {
		case "task":
			if k.Count != 2 || len(k.Records) != 1 || len(got.Tasks) != 1 {
				t.Errorf("tasks: count %d, %d shown (%d in tasks), want 2 counted, the one task shown", k.Count, len(k.Records), len(got.Tasks))
			}
		case "mail":
			if k.Count != 1 || len(k.Records) != 1 || got.Mail["alice"].Total != 1 {
				t.Errorf("mail: count %d, %d shown, alice's %+v: want the one message", k.Count, len(k.Records), got.Mail["alice"])
			}
		}
	}
}

// TestKeptKindPartVersion: a kind part kept in a file decodes as it was
// encoded; one an earlier version kept (its Leaf counted records by
// content, not by name: the same bytes without kindPartVersion) is
// refused, so it is made afresh rather than mixed with this version's.
func TestKeptKindPartVersion(t *testing.T) {
	p := kindPart{count: 3, newest: []recordAt{{name: "b", path: "mail/x/b.json"}, {name: "a", path: "mail/x/a.json"}},
		mail: map[string]mailCount{"alice": {Total: 2, Unread: 1}, "bob": {Total: 1}}}
	b, err := encodeKindPart(p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeKindPart(b)
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, p)
	}
	if _, err := decodeKindPart(b[:len(b)-1]); err == nil {
		t.Errorf("an earlier version's part (no version at its end) decoded")
	}
	if _, err := decodeKindPart(append(b[:len(b)-1:len(b)-1], kindPartVersion+1)); err == nil {
		t.Errorf("a later version's part decoded")
	}
}

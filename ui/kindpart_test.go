package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
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

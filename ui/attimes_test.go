package ui

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
)

// TestAtTimeResolvedAtEachTip: a server remembers what an ?at= time
// resolved to, for /api/state and /api/events with the same ?at=, only
// for the tip it resolved it at: a time after the tip names the tip, and
// after another write the new tip, in both answers.
func TestAtTimeResolvedAtEachTip(t *testing.T) {
	f := newFixture(t, true, Options{})
	tip := func() string {
		var c string
		if err := f.st.View(context.Background(), func(sn *gitstate.Snapshot) error { c = sn.Commit(); return nil }); err != nil {
			t.Fatal(err)
		}
		return c
	}
	at := url.QueryEscape(time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	for i, id := range []string{"alice", "bob", "carol"} {
		f.call(t, human, "agent_register", `{"id":"`+id+`","type":"worker"}`)
		want := tip()
		for range 2 { // the second from what the first resolved
			var st stateJSON
			if code := get(t, f.url+"/api/state?at="+at, &st); code != 200 || st.Commit != want {
				t.Fatalf("write %d: /api/state?at= an hour on: %d, commit %s, want the tip %s", i, code, st.Commit, want)
			}
			var ev eventPage
			if code := get(t, f.url+"/api/events?limit=1&at="+at, &ev); code != 200 || len(ev.Events) != 1 || ev.Events[0].Commit != want {
				t.Fatalf("write %d: /api/events?at= an hour on: %d %+v, want the tip %s first", i, code, ev.Events, want)
			}
		}
	}
}

package builtin_test

import (
	"maps"
	"testing"

	"github.com/gitcodex/git-codex/tools/builtin"
)

// A merge lets a peer's deletion of a kept record stand only if an archive
// holds a version `archive` could have taken (gitstate.Layout.Archivable):
// the kinds say which, so a forged archive cannot take an unread mail, a
// live instance or a running delegation off our tip.
func TestLayoutArchivable(t *testing.T) {
	l := builtin.Registry().Kinds().Layout()
	if l.Archivable == nil {
		t.Fatal("the layout has no archive rule")
	}
	for _, c := range []struct {
		path, data string
		want       bool
	}{
		{"mail/bob/a/b/m-1.json", `{"id":"m-1","is_read":true}`, true},
		{"mail/bob/a/b/m-1.json", `{"id":"m-1","is_read":false}`, false},
		{"agents/w1.json", `{"id":"w1","status":"TERMINATED","cleaned_at":"2026-01-01T00:00:00Z"}`, true},
		{"agents/w1.json", `{"id":"w1","status":"ACTIVE","cleaned_at":"2026-01-01T00:00:00Z"}`, false},
		{"agents/w1.json", `{"id":"w1","status":"TERMINATED","worktree":"/x","tmux_session":"codex-w1"}`, false},
		{"agents/w1.json", `{"id":"w1","status":"FAILED","cleaned_at":"2026-01-01T00:00:00Z","held_tasks":["t1"]}`, false},
		{"delegations/a/b/d-1.json", `{"id":"d-1","status":"DONE"}`, true},
		{"delegations/a/b/d-1.json", `{"id":"d-1","status":"RUNNING"}`, false},
		{"github/a/b/g-1.json", `{"id":"g-1","state":"DONE"}`, true},
		{"github/a/b/g-1.json", `{"id":"g-1","state":"PENDING"}`, false},
		{"tasks/a/b/t-1.json", `{"id":"t-1"}`, false},
		{"decisions/a/b/d-1.json", `{"id":"d-1"}`, false},
		{"config/config.json", `{}`, false},
	} {
		if got := l.Archivable(c.path, []byte(c.data)); got != c.want {
			t.Errorf("Archivable(%s, %s) = %v, want %v", c.path, c.data, got, c.want)
		}
	}
	// the retention names the layout hands gitstate (what a record
	// archive may hold) come from the kinds, by directory
	got := map[string]string{}
	for _, d := range l.Dirs {
		if d.Retention != "" {
			got[d.Dir] = d.Retention
		}
	}
	want := map[string]string{"mail": "mail", "agents": "instances", "wake": "instances", "delegations": "delegations", "github": "github", "conflicts": "conflicts"}
	if !maps.Equal(got, want) {
		t.Errorf("retention by directory = %v, want %v", got, want)
	}
	for _, k := range builtin.Registry().Kinds() {
		if (k.Retention != "") != (k.Archived != nil) {
			t.Errorf("kind %s: retention %q but archive rule set %v: archive takes a kind with both or neither", k.Name, k.Retention, k.Archived != nil)
		}
	}
}

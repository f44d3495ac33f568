package builtin_test

import (
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
}

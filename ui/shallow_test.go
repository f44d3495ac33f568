package ui

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
)

// In a repository whose history of the state was fetched shallow (issue
// 27's first sync), ?at= a time before the boundary is HISTORY_CUT_OFF,
// not the state of a later commit and not "no such state"; a time after
// it answers, and so does the boundary commit's detail, with no changes.
func TestAtBeforeShallowBoundary(t *testing.T) {
	origin := gitstatetest.NewRepo(t)
	st, err := gitstate.Open(origin, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg := builtin.Registry()
	if _, err := reg.Init(context.Background(), st, tools.Origin{ID: human}); err != nil {
		t.Fatal(err)
	}
	if r := reg.CallAs(context.Background(), st, tools.Origin{ID: human}, "agent_register", []byte(`{"id":"alice","type":"worker"}`)); !r.OK {
		t.Fatalf("agent_register: %+v", r.Error)
	}
	st.Close()
	dir := filepath.Join(t.TempDir(), "shallow")
	gitstatetest.Git(t, origin, "init", "-q", dir)
	gitstatetest.Git(t, dir, "fetch", "-q", "--depth", "1", "file://"+origin, "+refs/codex/state:refs/codex/state")
	f := newFixtureAt(t, dir, false, Options{})
	tip := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)

	var e struct {
		Error apiError `json:"error"`
	}
	before := url.QueryEscape(time.Now().Add(-time.Hour).UTC().Format(time.RFC3339))
	for _, path := range []string{"/api/state?at=" + before, "/api/events?limit=5&at=" + before} {
		if code := get(t, f.url+path, &e); code != http.StatusNotFound || e.Error.Code != "HISTORY_CUT_OFF" {
			t.Errorf("GET %s: %d %+v; want 404 HISTORY_CUT_OFF", path, code, e.Error)
		}
	}
	later := url.QueryEscape(time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	if code := get(t, f.url+"/api/state?at="+later, nil); code != http.StatusOK {
		t.Errorf("?at= after the boundary: %d", code)
	}
	var detail commitDetail
	if code := get(t, f.url+"/api/commit/"+tip, &detail); code != http.StatusOK || len(detail.Changes) != 0 {
		t.Errorf("the boundary's detail: %d, changes %v", code, detail.Changes)
	}
}

package builtin_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestArchiveTakesWhatEnded: archive takes instances that ended and were
// cleaned up (with their wake record), finished delegations and GitHub
// calls and old conflicts, and leaves every record something live needs:
// an instance not cleaned up, running, holding a task or reviewing;
// a running delegation, a pending GitHub call, anything inside the window.
func TestArchiveTakesWhatEnded(t *testing.T) {
	e := newEnv(t)
	old := time.Now().Add(-72 * time.Hour).UTC().Format(time.RFC3339)
	recent := time.Now().UTC().Format(time.RFC3339)
	fan := func(dir, id string) string { return dir + "/" + gitstate.Fanout(id) + "/" + id + ".json" }
	agent := func(id, status, extra string) string {
		return `{"id":"` + id + `","type":"worker","state":"idle","status":"` + status + `","ended_at":"` + old + `","created_by":"` + human + `","created_at":"` + old + `","updated_at":"` + old + `","last_active_at":null,"clock":1` + extra + `}`
	}
	records := map[string]string{
		"agents/work-1.json":                       agent("work-1", "TERMINATED", `,"cleaned_at":"`+old+`","worktree":"/gone"`),
		"wake/work-1.json":                         `{"recipient":"work-1"}`,
		"agents/work-2.json":                       agent("work-2", "TERMINATED", `,"worktree":"/still/here"`),
		"agents/work-3.json":                       agent("work-3", "ACTIVE", ``),
		"agents/work-4.json":                       agent("work-4", "FAILED", `,"held_tasks":["t-1"]`),
		"agents/rev-5.json":                        agent("rev-5", "TERMINATED", ``),
		"reviews/active/work-3.json":               `{"coder":"work-3","claim":{"holder":"rev-5","clock":1,"at":"` + old + `"},"updated_at":"` + old + `","updated_by":"work-3","clock":1}`,
		fan("delegations", "dlg-01aaaaaaaaaaaaaa"): `{"id":"dlg-01aaaaaaaaaaaaaa","status":"DONE","updated_at":"` + old + `"}`,
		fan("delegations", "dlg-01bbbbbbbbbbbbbb"): `{"id":"dlg-01bbbbbbbbbbbbbb","status":"RUNNING","updated_at":"` + old + `"}`,
		fan("delegations", "dlg-01cccccccccccccc"): `{"id":"dlg-01cccccccccccccc","status":"DONE","updated_at":"` + recent + `"}`,
		fan("github", "gh-01aaaaaaaaaaaaaa"):       `{"id":"gh-01aaaaaaaaaaaaaa","state":"DONE","updated_at":"` + old + `"}`,
		fan("github", "gh-01bbbbbbbbbbbbbb"):       `{"id":"gh-01bbbbbbbbbbbbbb","state":"PENDING","updated_at":"` + old + `"}`,
		fan("conflicts", "k-01aaaaaaaaaaaaaa"):     `{"id":"k-01aaaaaaaaaaaaaa","created_at":"` + old + `"}`,
	}
	if _, err := e.st.Update(context.Background(), func(tx *gitstate.Tx) error {
		tx.SetMeta(gitstate.Meta{Summary: "records", Trailers: []gitstate.Trailer{{Key: gitstate.TrailerTool, Value: "test"}}})
		for p, r := range records {
			if err := tx.PutRaw(p, []byte(r)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	out := e.ok(human, "archive", `{"older_than":"1d"}`)
	ref, _ := out["ref"].(string)
	if out["total"] != float64(5) || ref == "" {
		t.Fatalf("archive: %v", out)
	}
	want := []string{"agents/work-1.json", fan("conflicts", "k-01aaaaaaaaaaaaaa"), fan("delegations", "dlg-01aaaaaaaaaaaaaa"), fan("github", "gh-01aaaaaaaaaaaaaa"), "manifest.json", "wake/work-1.json"}
	got := strings.Split(gitstatetest.Git(t, e.dir, "ls-tree", "-r", "--name-only", ref), "\n")
	sort.Strings(got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("archive holds %v\nwant %v", got, want)
	}
	tip := gitstatetest.Git(t, e.dir, "ls-tree", "-r", "--name-only", gitstate.RefState)
	for p := range records {
		archived := false
		for _, w := range want {
			archived = archived || w == p
		}
		if strings.Contains(tip, p) == archived {
			t.Errorf("%s: archived %v, but on the tip: %v", p, archived, strings.Contains(tip, p))
		}
	}
	// nothing more to take: a second archive changes nothing
	if out := e.ok(human, "archive", `{"older_than":"1d"}`); out["total"] != float64(0) {
		t.Errorf("second archive: %v", out)
	}
}

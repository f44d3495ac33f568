package ui

import (
	"context"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestAtFoldedRead: ?at= a read that retention folded (FoldReads) and
// whose own commit `git gc --prune=now` removed shows the state that read
// saw (its Codex-Read-At), as ?at= the read did before the fold; in a
// repository without that state commit it answers 404
// RESOURCE_NOT_FOUND saying where the read went.
func TestAtFoldedRead(t *testing.T) {
	ctx := context.Background()
	dir := gitstatetest.NewRepo(t)
	f := newFixtureAt(t, dir, true, Options{})
	f.call(t, human, "agent_register", `{"id":"alice","type":"worker"}`)
	read := f.call(t, human, "agent_list", `{}`).Commit
	seen := gitstatetest.Git(t, dir, "log", "-1", "--format=%(trailers:key="+gitstate.TrailerReadAt+",valueonly)", read)
	if read == "" || !isCommitID(seen) {
		t.Fatalf("agent_list wrote the read %q, which saw %q", read, seen)
	}
	var before stateJSON
	if code := get(t, f.url+"/api/state?at="+read, &before); code != http.StatusOK || before.Commit != read {
		t.Fatalf("?at= the read before the fold: %d, commit %s", code, before.Commit)
	}
	f.call(t, human, "agent_register", `{"id":"bob","type":"worker"}`) // the tip moves on

	// fold today's reads as a store two days on would, then prune
	later := time.Now().UTC().AddDate(0, 0, 2) // UTC days: the reads refs' (no DST)
	st, err := gitstate.Open(dir, gitstate.Options{Now: func() time.Time { return later }})
	if err != nil {
		t.Fatal(err)
	}
	folded, err := st.FoldReads(ctx, later.AddDate(0, 0, -1), later)
	st.Close()
	if err != nil || len(folded) != 1 {
		t.Fatalf("FoldReads = %v, %v", folded, err)
	}
	gitstatetest.Git(t, dir, "gc", "-q", "--prune=now")
	if err := exec.Command("git", "-C", dir, "cat-file", "-e", read).Run(); err == nil {
		t.Fatalf("git gc --prune=now kept the folded read %s", read)
	}

	// a new server, as a new process: the old one still reads the packs
	// it opened before git deleted them
	g := newFixtureAt(t, dir, false, Options{})
	for _, at := range []string{read, read[:10]} {
		var past stateJSON
		if code := get(t, g.url+"/api/state?at="+at, &past); code != http.StatusOK {
			t.Fatalf("?at=%s after the prune: %d", at, code)
		}
		if past.Tip || past.Commit != seen || len(past.Agents) != len(before.Agents) {
			t.Fatalf("?at=%s after the prune: commit %s, %d agents; want the state the read saw (%s, %d agents)", at, past.Commit, len(past.Agents), seen, len(before.Agents))
		}
	}

	// another repository holds the fold but not the state it saw
	other := filepath.Join(t.TempDir(), "other")
	gitstatetest.Git(t, dir, "init", "-q", other)
	o := newFixtureAt(t, other, true, Options{})
	gitstatetest.Git(t, other, "fetch", "-q", "file://"+dir, "+"+folded[0]+":refs/codex/remotes/origin/reads/m/day")
	var e struct {
		Error apiError `json:"error"`
	}
	code := get(t, o.url+"/api/state?at="+read, &e)
	fold := gitstatetest.Git(t, dir, "rev-parse", folded[0])
	if code != http.StatusNotFound || e.Error.Code != "RESOURCE_NOT_FOUND" || !strings.Contains(e.Error.Message, "folded into "+fold) || !strings.Contains(e.Error.Message, seen) {
		t.Fatalf("?at= a folded read whose state is elsewhere: %d %+v", code, e.Error)
	}
}
